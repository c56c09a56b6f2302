/*
 * Builds Arrow record batches by hand through the Arrow C Data Interface, without libarrow:
 * a struct array ("+s") whose children are int32 ("i"), int64 ("l") or utf8 ("u") columns
 * with no nulls. Every buffer is malloc'd and freed by the release callbacks, so whoever
 * takes the structs (libpaimon_wire) frees them when it is done.
 */
#ifndef PAIMON_WIRE_TEST_ARROW_BATCH_H
#define PAIMON_WIRE_TEST_ARROW_BATCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paimon_wire.h"

/* One column: a name and its values (int32_t[], int64_t[] or const char *[]). */
typedef struct {
  const char *name;
  char type; /* 'i' int32, 'l' int64, 'u' utf8 */
  const void *values;
} column_spec;

static inline void *checked_malloc(size_t size) {
  void *p = malloc(size == 0 ? 1 : size);
  if (p == NULL) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

/* Frees an array's own buffers and its children. The buffers array and every buffer in it
 * were malloc'd here; the first (validity) buffer is always NULL. */
static inline void release_array(struct ArrowArray *array) {
  for (int64_t i = 0; i < array->n_children; i++) {
    struct ArrowArray *child = array->children[i];
    if (child->release != NULL) child->release(child);
    free(child);
  }
  free(array->children);
  for (int64_t i = 0; i < array->n_buffers; i++) free((void *)array->buffers[i]);
  free((void *)array->buffers);
  array->release = NULL;
}

/* Frees a schema's children; format and name strings are string literals. */
static inline void release_schema(struct ArrowSchema *schema) {
  for (int64_t i = 0; i < schema->n_children; i++) {
    struct ArrowSchema *child = schema->children[i];
    if (child->release != NULL) child->release(child);
    free(child);
  }
  free(schema->children);
  schema->release = NULL;
}

static inline void init_array(struct ArrowArray *array, int64_t length, int64_t n_buffers) {
  memset(array, 0, sizeof *array);
  array->length = length;
  array->n_buffers = n_buffers;
  array->buffers = (const void **)checked_malloc(sizeof(void *) * (size_t)n_buffers);
  for (int64_t i = 0; i < n_buffers; i++) array->buffers[i] = NULL;
  array->release = release_array;
}

static inline void init_schema(struct ArrowSchema *schema, const char *format, const char *name) {
  memset(schema, 0, sizeof *schema);
  schema->format = format;
  schema->name = name;
  schema->flags = ARROW_FLAG_NULLABLE;
  schema->release = release_schema;
}

/* Fills one child column of `rows` values. */
static inline void make_column(const column_spec *spec, int64_t rows, struct ArrowArray *array,
                        struct ArrowSchema *schema) {
  switch (spec->type) {
    case 'i':
    case 'l': {
      size_t width = spec->type == 'i' ? sizeof(int32_t) : sizeof(int64_t);
      init_array(array, rows, 2);
      void *values = checked_malloc(width * (size_t)rows);
      memcpy(values, spec->values, width * (size_t)rows);
      array->buffers[1] = values;
      init_schema(schema, spec->type == 'i' ? "i" : "l", spec->name);
      break;
    }
    case 'u': {
      const char *const *strings = (const char *const *)spec->values;
      init_array(array, rows, 3);
      int32_t *offsets = (int32_t *)checked_malloc(sizeof(int32_t) * (size_t)(rows + 1));
      size_t total = 0;
      for (int64_t i = 0; i < rows; i++) total += strlen(strings[i]);
      char *data = (char *)checked_malloc(total);
      offsets[0] = 0;
      for (int64_t i = 0; i < rows; i++) {
        size_t len = strlen(strings[i]);
        memcpy(data + offsets[i], strings[i], len);
        offsets[i + 1] = offsets[i] + (int32_t)len;
      }
      array->buffers[1] = offsets;
      array->buffers[2] = data;
      init_schema(schema, "u", spec->name);
      break;
    }
    default:
      fprintf(stderr, "unknown column type %c\n", spec->type);
      exit(2);
  }
}

/* Builds a record batch of `rows` rows and `n_columns` columns into `array` / `schema`. */
static inline void make_batch(int64_t rows, int n_columns, const column_spec *columns,
                       struct ArrowArray *array, struct ArrowSchema *schema) {
  init_array(array, rows, 1);
  init_schema(schema, "+s", "");
  schema->flags = 0;
  array->n_children = n_columns;
  schema->n_children = n_columns;
  array->children =
      (struct ArrowArray **)checked_malloc(sizeof(struct ArrowArray *) * (size_t)n_columns);
  schema->children =
      (struct ArrowSchema **)checked_malloc(sizeof(struct ArrowSchema *) * (size_t)n_columns);
  for (int c = 0; c < n_columns; c++) {
    array->children[c] = (struct ArrowArray *)checked_malloc(sizeof(struct ArrowArray));
    schema->children[c] = (struct ArrowSchema *)checked_malloc(sizeof(struct ArrowSchema));
    make_column(&columns[c], rows, array->children[c], schema->children[c]);
  }
}

#endif /* PAIMON_WIRE_TEST_ARROW_BATCH_H */

/*
 * An LD_PRELOAD shim that kills its process (SIGKILL, no cleanup, no unwinding) at the
 * moment a snapshot is published, to test crash points of a real coordinator process.
 *
 * The patched paimon crate publishes `snapshot-N` on a local filesystem with link(2)
 * (std::fs::hard_link -> linkat). With PAIMON_WIRE_CRASH_AT set:
 *   before-publish  the process dies when it is about to link `snapshot-N`: manifests and
 *                   manifest lists are written, the snapshot is not;
 *   after-publish   the process dies right after the link succeeded: the snapshot is in
 *                   the table, the process never reported it;
 *   always-lose     no crash: every link of a snapshot fails with EEXIST, as if another
 *                   committer had always just published that snapshot.
 * Any other link passes through untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_snapshot(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "snapshot-", 9) == 0;
}

static int crash_at(const char *point) {
    const char *at = getenv("PAIMON_WIRE_CRASH_AT");
    return at != NULL && strcmp(at, point) == 0;
}

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags) {
    int (*real_linkat)(int, const char *, int, const char *, int) =
        (int (*)(int, const char *, int, const char *, int))dlsym(RTLD_NEXT, "linkat");
    int snapshot = is_snapshot(newpath);
    if (snapshot && crash_at("before-publish")) kill(getpid(), SIGKILL);
    if (snapshot && crash_at("always-lose")) {
        errno = EEXIST;
        return -1;
    }
    int rc = real_linkat(olddirfd, oldpath, newdirfd, newpath, flags);
    if (snapshot && rc == 0 && crash_at("after-publish")) kill(getpid(), SIGKILL);
    return rc;
}

int link(const char *oldpath, const char *newpath) {
    return linkat(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}

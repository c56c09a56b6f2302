// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! An Avro object container file written block by block from records the caller encodes
//! (`manifest_entry_encode`), the counterpart of `ocf`'s reader.
//!
//! The header is `apache_avro`'s own (schema, codec and sync marker, as its `Writer` writes
//! them); the blocks are laid out as its `Writer` lays them out (a block is written once its
//! records reach the block size). Two things differ: the records arrive already encoded, and a
//! zstd file compresses every block with one compression context, where `apache_avro` sets up
//! a new zstd stream per block. A block's frame then carries its content size, which every
//! zstd decoder (ours, `apache_avro`'s and Java's) reads.

use super::super::objects_file::{avro_codec, new_avro_writer, DEFAULT_AVRO_ZSTD_LEVEL};
use super::manifest_entry_encode::put_long;
use apache_avro::{Codec, Schema};

const SYNC_MARKER_LEN: usize = 16;

/// How blocks are compressed.
enum BlockCodec {
    /// zstd, one context for every block of the file.
    Zstandard(zstd::bulk::Compressor<'static>),
    /// Any other codec, as `apache_avro` compresses a block.
    Other(Codec),
}

/// An Avro object container file being written, held in memory.
pub(crate) struct OcfWriter {
    /// The header and every block written so far.
    out: Vec<u8>,
    marker: [u8; SYNC_MARKER_LEN],
    /// The records of the block being filled, encoded and not compressed.
    block: Vec<u8>,
    block_records: usize,
    block_size: usize,
    codec: BlockCodec,
}

impl OcfWriter {
    /// A file of `schema`'s records, compressed with `compression` (a name `avro_codec`
    /// knows), in blocks of at least `block_size` bytes of encoded records.
    pub(crate) fn new(
        schema: &Schema,
        compression: &str,
        block_size: usize,
    ) -> crate::Result<Self> {
        // A writer without records writes the header alone, sync marker last.
        let out = new_avro_writer(schema, compression, block_size)?.into_inner()?;
        let marker = out
            .len()
            .checked_sub(SYNC_MARKER_LEN)
            .and_then(|start| out[start..].try_into().ok())
            .ok_or_else(|| crate::Error::UnexpectedError {
                message: format!("an Avro header of {} bytes has no sync marker", out.len()),
                source: None,
            })?;
        let codec = match avro_codec(compression)? {
            Codec::Zstandard(_) => BlockCodec::Zstandard(
                zstd::bulk::Compressor::new(i32::from(DEFAULT_AVRO_ZSTD_LEVEL))
                    .map_err(compression_error)?,
            ),
            other => BlockCodec::Other(other),
        };
        Ok(Self {
            out,
            marker,
            block: Vec::with_capacity(block_size + block_size / 4),
            block_records: 0,
            block_size: block_size.max(1),
            codec,
        })
    }

    /// Adds one record, which `encode` appends to the block; writes the block once it reaches
    /// the block size.
    pub(crate) fn append(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> crate::Result<()> {
        encode(&mut self.block);
        self.block_records += 1;
        if self.block.len() >= self.block_size {
            self.write_block()?;
        }
        Ok(())
    }

    /// The bytes of the file written so far: the header and the full blocks, not the block
    /// being filled (what `apache_avro::Writer::get_ref` shows).
    pub(crate) fn written_len(&self) -> usize {
        self.out.len()
    }

    /// The whole file, the last block written.
    pub(crate) fn into_bytes(mut self) -> crate::Result<Vec<u8>> {
        self.write_block()?;
        Ok(self.out)
    }

    /// Writes the block being filled, if it holds a record: its record count, its length,
    /// its compressed bytes and the sync marker.
    fn write_block(&mut self) -> crate::Result<()> {
        if self.block_records == 0 {
            return Ok(());
        }
        let compressed;
        let data: &[u8] = match &mut self.codec {
            BlockCodec::Zstandard(compressor) => {
                compressed = compressor
                    .compress(&self.block)
                    .map_err(compression_error)?;
                &compressed
            }
            BlockCodec::Other(codec) => {
                codec.compress(&mut self.block)?;
                &self.block
            }
        };
        put_long(&mut self.out, self.block_records as i64);
        put_long(&mut self.out, data.len() as i64);
        self.out.extend_from_slice(data);
        self.out.extend_from_slice(&self.marker);
        self.block.clear();
        self.block_records = 0;
        Ok(())
    }
}

fn compression_error(error: std::io::Error) -> crate::Error {
    crate::Error::UnexpectedError {
        message: format!("zstd compression of an Avro block failed: {error}"),
        source: Some(Box::new(error)),
    }
}

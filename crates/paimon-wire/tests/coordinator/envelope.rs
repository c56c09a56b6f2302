//! The optional PWIR envelope: round trip and every error, each naming its offset.

use paimon_wire::envelope::{
    is_envelope, unwrap, wrap, EnvelopeErrorKind, ENVELOPE_VERSION, HEADER_LEN, MAGIC,
};
use paimon_wire::{serialize_list, CommitMessage, SerializerVersion};

fn payload() -> Vec<u8> {
    serialize_list(
        &[CommitMessage::new(Vec::new(), 0, Vec::new())],
        SerializerVersion::V3,
    )
    .unwrap()
}

#[test]
fn round_trip_keeps_version_and_payload() {
    for version in SerializerVersion::ALL {
        let raw = payload();
        let framed = wrap(version, &raw);
        assert_eq!(framed.len(), HEADER_LEN + raw.len());
        assert!(is_envelope(&framed));
        assert!(!is_envelope(&raw));
        let (back_version, back) = unwrap(&framed).unwrap();
        assert_eq!(back_version, version);
        assert_eq!(back, raw.as_slice());
    }
    let framed_empty = wrap(SerializerVersion::V14, &[]);
    let (version, empty) = unwrap(&framed_empty).unwrap();
    assert_eq!((version, empty), (SerializerVersion::V14, &[][..]));
}

#[test]
fn header_layout_is_the_documented_one() {
    let framed = wrap(SerializerVersion::V11, b"123456789");
    assert_eq!(&framed[0..4], &MAGIC);
    assert_eq!(&framed[4..6], &ENVELOPE_VERSION.to_be_bytes());
    assert_eq!(&framed[6..8], &[0, 0]);
    assert_eq!(&framed[8..12], &11i32.to_be_bytes());
    assert_eq!(&framed[12..20], &9u64.to_be_bytes());
    // The CRC-32C check value of "123456789" (the CRC catalogue's CRC-32/ISCSI entry).
    assert_eq!(&framed[20..24], &0xe306_9283u32.to_be_bytes());
    assert_eq!(&framed[24..], b"123456789");
}

#[test]
fn every_error_names_its_kind_and_offset() {
    let good = wrap(SerializerVersion::V14, &payload());

    let raw = payload();
    let error = unwrap(&raw).unwrap_err();
    assert!(matches!(error.kind, EnvelopeErrorKind::BadMagic { .. }));
    assert_eq!(error.offset, 0);
    assert!(error.to_string().contains("PWIR"), "{error}");

    let error = unwrap(&good[..10]).unwrap_err();
    assert_eq!(
        error.kind,
        EnvelopeErrorKind::Truncated {
            needed: HEADER_LEN as u64,
            available: 10
        }
    );
    assert_eq!(error.offset, 10);

    let error = unwrap(&good[..good.len() - 1]).unwrap_err();
    assert!(matches!(error.kind, EnvelopeErrorKind::Truncated { .. }));
    assert_eq!(error.offset, good.len() - 1);

    let mut longer = good.clone();
    longer.push(0);
    let error = unwrap(&longer).unwrap_err();
    assert!(matches!(
        error.kind,
        EnvelopeErrorKind::LengthMismatch { .. }
    ));
    assert_eq!(error.offset, good.len());

    let mut huge_length = good.clone();
    huge_length[12..20].copy_from_slice(&u64::MAX.to_be_bytes());
    let error = unwrap(&huge_length).unwrap_err();
    assert!(matches!(error.kind, EnvelopeErrorKind::Truncated { .. }));

    let mut version = good.clone();
    version[4..6].copy_from_slice(&2u16.to_be_bytes());
    let error = unwrap(&version).unwrap_err();
    assert_eq!(
        error.kind,
        EnvelopeErrorKind::UnknownEnvelopeVersion { version: 2 }
    );
    assert_eq!(error.offset, 4);

    let mut reserved = good.clone();
    reserved[7] = 1;
    let error = unwrap(&reserved).unwrap_err();
    assert_eq!(error.kind, EnvelopeErrorKind::NonZeroReserved { value: 1 });
    assert_eq!(error.offset, 6);

    let mut serializer = good.clone();
    serializer[8..12].copy_from_slice(&15i32.to_be_bytes());
    let error = unwrap(&serializer).unwrap_err();
    assert_eq!(
        error.kind,
        EnvelopeErrorKind::UnknownSerializerVersion { version: 15 }
    );
    assert_eq!(error.offset, 8);

    let mut corrupted = good.clone();
    let last = corrupted.len() - 1;
    corrupted[last] ^= 0x01;
    let error = unwrap(&corrupted).unwrap_err();
    assert!(matches!(error.kind, EnvelopeErrorKind::CrcMismatch { .. }));
    assert_eq!(error.offset, HEADER_LEN);
    assert!(error.to_string().contains("corrupted"), "{error}");

    let error = unwrap(b"PW").unwrap_err();
    assert!(matches!(error.kind, EnvelopeErrorKind::Truncated { .. }));
    let error = unwrap(b"").unwrap_err();
    assert!(matches!(error.kind, EnvelopeErrorKind::Truncated { .. }));
}

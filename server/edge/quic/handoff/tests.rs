//! The handover's datagrams: whose each is, and how one is passed on.

use quinn::udp::EcnCodepoint;

use super::wire::*;
use super::*;

fn short(tag: u16) -> Vec<u8> {
    let mut p = vec![0x40];
    p.extend_from_slice(&tag.to_be_bytes());
    p.extend_from_slice(&[7; 30]);
    p
}

fn long(kind: u8, dcid: &[u8]) -> Vec<u8> {
    let mut p = vec![0xc0 | kind << 4, 0, 0, 0, 1, dcid.len() as u8];
    p.extend_from_slice(dcid);
    p.extend_from_slice(&[0; 40]);
    p
}

#[test]
fn a_datagram_goes_to_the_process_whose_tag_its_connection_id_carries() {
    let (ours, theirs, other) = (0x1111, 0x2222, 0x3333);
    assert_eq!(whose(&short(ours), ours, Some(theirs)), Whose::Ours);
    assert_eq!(
        whose(&short(theirs), ours, Some(theirs)),
        Whose::Predecessor
    );
    assert_eq!(whose(&short(other), ours, Some(theirs)), Whose::Nobody);
    assert_eq!(whose(&short(theirs), ours, None), Whose::Nobody);
    // A new connection's Initial: an ID of the client's choosing.
    let random = [0x33, 0x33, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9];
    assert_eq!(whose(&long(0, &random), ours, Some(theirs)), Whose::Ours);
    assert_eq!(
        whose(&long(0, &random[..8]), ours, Some(theirs)),
        Whose::Ours
    );
    // Handshake packets carry the server's ID.
    let mut id = [0u8; CID_LEN];
    id[..2].copy_from_slice(&theirs.to_be_bytes());
    assert_eq!(whose(&long(2, &id), ours, Some(theirs)), Whose::Predecessor);
    id[..2].copy_from_slice(&other.to_be_bytes());
    assert_eq!(whose(&long(2, &id), ours, Some(theirs)), Whose::Nobody);
    // Not QUIC v1: quinn answers (version negotiation).
    let mut v2 = long(0, &id);
    v2[4] = 2;
    assert_eq!(whose(&v2, ours, None), Whose::Ours);
    assert_eq!(whose(&[], ours, None), Whose::Nobody);
    assert_eq!(whose(&[0x40, 1], ours, None), Whose::Nobody);
}

#[test]
fn a_passed_datagram_keeps_its_source_and_destination() {
    let (a, b) = UnixDatagram::pair().unwrap();
    let meta = RecvMeta {
        addr: "203.0.113.9:5555".parse().unwrap(),
        len: 3,
        stride: 3,
        ecn: Some(EcnCodepoint::Ect0),
        dst_ip: Some("192.0.2.1".parse().unwrap()),
    };
    pass(&a, &meta, b"abc", &AtomicBool::new(false));
    let mut buf = [0u8; 100];
    let n = b.recv(&mut buf).unwrap();
    let (got, payload) = unframe(&buf[..n]).unwrap();
    assert_eq!(payload, b"abc");
    assert_eq!(got.addr, meta.addr);
    assert_eq!(got.ecn, meta.ecn);
    assert_eq!(got.dst_ip, meta.dst_ip);
}

/// An IPv4 client on the shipped `[::]` socket is seen as an
/// IPv4-mapped IPv6 address: passed on, it must stay one, or quinn
/// takes the next packet for a migration (its congestion state reset,
/// its sending capped until the new path is validated).
#[test]
fn a_passed_datagram_keeps_its_address_family() {
    let (a, b) = UnixDatagram::pair().unwrap();
    for (addr, dst) in [
        ("[::ffff:203.0.113.9]:5555", "::ffff:192.0.2.1"),
        ("203.0.113.9:5555", "192.0.2.1"),
        ("[2001:db8::9]:5555", "2001:db8::1"),
    ] {
        let meta = RecvMeta {
            addr: addr.parse().unwrap(),
            len: 3,
            stride: 3,
            ecn: None,
            dst_ip: Some(dst.parse().unwrap()),
        };
        pass(&a, &meta, b"abc", &AtomicBool::new(false));
        let mut buf = [0u8; 100];
        let n = b.recv(&mut buf).unwrap();
        let (got, _) = unframe(&buf[..n]).unwrap();
        assert_eq!((got.addr, got.dst_ip), (meta.addr, meta.dst_ip), "{addr}");
    }
}

/// The layout a release before the family bit wrote (and reads): the
/// same 36 bytes, so a publish from it, or a rollback to it, passes
/// datagrams both ways.
#[test]
fn a_datagram_passed_by_the_layout_before_the_family_bit_is_read_as_then() {
    assert_eq!(HEADER, 36);
    let mut old = Vec::new();
    old.extend_from_slice(
        &std::net::Ipv4Addr::new(203, 0, 113, 9)
            .to_ipv6_mapped()
            .octets(),
    );
    old.extend_from_slice(&5555u16.to_be_bytes());
    old.push(EcnCodepoint::Ect0 as u8);
    old.push(4);
    old.extend_from_slice(
        &std::net::Ipv4Addr::new(192, 0, 2, 1)
            .to_ipv6_mapped()
            .octets(),
    );
    old.extend_from_slice(b"abc");
    let (got, payload) = unframe(&old).unwrap();
    assert_eq!(got.addr, "203.0.113.9:5555".parse().unwrap());
    assert_eq!(got.ecn, Some(EcnCodepoint::Ect0));
    assert_eq!(got.dst_ip, Some("192.0.2.1".parse().unwrap()));
    assert_eq!(payload, b"abc");
}

/// One receive of several datagrams from one address pair (GRO), of
/// several connections: each segment goes where its own tag says.
#[test]
fn each_segment_of_a_merged_receive_is_sorted_on_its_own() {
    let (ours, theirs, other) = (0x1111, 0x2222, 0x3333);
    let stride = short(ours).len();
    let mut last = short(ours);
    last.truncate(20);
    last[3] = 0xee;
    for order in [
        [short(ours), short(theirs), short(other), last.clone()],
        [short(theirs), short(ours), short(theirs), last.clone()],
    ] {
        let mut buf: Vec<u8> = order.concat();
        let mut meta = RecvMeta {
            addr: "203.0.113.9:5555".parse().unwrap(),
            len: buf.len(),
            stride,
            ecn: None,
            dst_ip: None,
        };
        let mut passed = Vec::new();
        sort(&mut buf, &mut meta, ours, Some(theirs), |_, d| {
            passed.push(d.to_vec())
        });
        let kept: Vec<u8> = order
            .iter()
            .filter(|d| whose(d, ours, Some(theirs)) == Whose::Ours)
            .flatten()
            .copied()
            .collect();
        assert_eq!(&buf[..meta.len], &kept[..], "{order:?}");
        assert_eq!(meta.stride, stride);
        let theirs_sent: Vec<Vec<u8>> = order
            .iter()
            .filter(|d| whose(d, ours, Some(theirs)) == Whose::Predecessor)
            .cloned()
            .collect();
        assert_eq!(passed, theirs_sent, "{order:?}");
    }
}

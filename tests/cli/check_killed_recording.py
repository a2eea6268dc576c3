"""Checks one killed (or cut) recording as test_killed_recording.sh read it back.

Usage: check_killed_recording.py FILE STATUS STDERR READ_RAW REFERENCE_RAW [RUN_STATUS RUN_STDERR RESULTS_H5]

FILE is the recording (a raw file, or part 0 of a tag file set); STATUS and STDERR are what
`tagflow convert FILE READ_RAW` returned and printed. From FILE's own bytes this script works
out where its damaged tail begins, if it has one, and how many tags its complete records hold
(parsing docs/formats.md itself, not through tagflow), then requires: no complaint and exit 0
for a file without a damaged tail; otherwise exit 3 (1 when part 0 is cut inside its file
header, which leaves nothing to read) and a message naming the file and the byte offset of the
damaged tail; READ_RAW holding exactly the tags of the complete records, and those being the
first tags of REFERENCE_RAW, the synthetic stream recorded in full. With the RUN_* arguments,
the same of `tagflow run` with a Countrate over FILE: its exit status, message, the
`damaged_tail` attribute and the counts of the tags read back. Prints a one-line summary;
exits 1 with the reason when a check fails.
"""

import os
import struct
import sys


def crc32c(data, table=[]):
    if not table:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    crc = 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def u32(data, at):
    return struct.unpack_from("<I", data, at)[0]


class Corrupt(Exception):
    """Damage a kill cannot cause: the writer is at fault."""


def parse_raw(path):
    size = os.path.getsize(path)
    if size % 16 == 0:
        return size // 16, None, 0
    return size // 16, f"raw tag file '{path}': the record at byte offset {size - size % 16}", 3


def parse_tag_set(path):
    """(tags in complete records, text naming the damaged tail or None, expected exit)."""
    base, extension = os.path.splitext(path)
    complete = 0
    part = 0
    while True:
        name = path if part == 0 else f"{base}.{part}{extension}"
        if not os.path.exists(name):
            return complete, f"continues in part {part}, but '{name}' does not exist", 3
        with open(name, "rb") as f:
            data = f.read()
        if len(data) < 16 or len(data) < u32(data, 12):
            where = f"tag file '{name}' is truncated at byte offset {len(data)}, inside its file header"
            return complete, where, 1 if part == 0 else 3
        offset = u32(data, 12)
        record = 0
        while True:
            where = f"tag file '{name}', record {record} at byte offset {offset}"
            header = data[offset : offset + 56]
            if len(header) < 56:
                return complete, where, 3
            if crc32c(header[:52]) != u32(header, 52):
                # A torn header is what a kill while overwriting the provisional part end leaves:
                # only ever as the file's last bytes.
                if offset + 56 != len(data):
                    raise Corrupt(f"{where}: a bad record header in the middle of the file")
                return complete, where, 3
            kind, flags = header[4], struct.unpack_from("<H", header, 6)[0]
            count, stored = u32(header, 16), u32(header, 24)
            if kind == 3:
                # Its payload is the part's time index; one cut short (a kill while the part
                # was ended) still ends the part, without an index.
                if offset + 56 + stored < len(data):
                    raise Corrupt(f"{where}: {len(data) - offset - 56 - stored} bytes after the part end")
                payload = data[offset + 56 :]
                if len(payload) == stored and crc32c(payload) != u32(header, 28):
                    raise Corrupt(f"{where}: the part end's index fails its checksum")
                if flags & 1 == 0:
                    return complete, None, 0
                part += 1
                break
            if offset + 56 + stored > len(data):
                return complete, where, 3
            if kind == 1:
                complete += count
            record += 1
            offset += 56 + stored


def main():
    path, status, err_path, read_path, reference_path = sys.argv[1:6]
    status = int(status)
    err = open(err_path).read().strip()

    def require(condition, what):
        if not condition:
            print(f"{what} (exit {status}, stderr: {err!r})")
            sys.exit(1)

    try:
        complete, tail, expected = (parse_raw if path.endswith(".raw") else parse_tag_set)(path)
    except Corrupt as error:
        require(False, str(error))
    if tail is None:
        require(status == 0 and err == "", "a file without a damaged tail did not read cleanly")
    else:
        require(status == expected and tail in err, f"expected exit {expected} and {tail!r}")
        require(expected != 3 or "damaged tail" in err, "the message does not say 'damaged tail'")
    read = open(read_path, "rb").read() if os.path.exists(read_path) else b""
    require(len(read) == 16 * complete,
            f"read back {len(read) // 16} tags where the complete records hold {complete}")
    with open(reference_path, "rb") as f:
        require(read == f.read(len(read)), "the tags read back are not the stream's first tags")
    summary = f"{complete} tags" + (", clean" if tail is None else f", damaged tail named: {tail}")

    if len(sys.argv) > 6:
        import h5py
        import numpy as np

        status, err = int(sys.argv[6]), open(sys.argv[7]).read().strip()
        require(status == (0 if tail is None else expected), "tagflow run: wrong exit status")
        if expected == 1:
            require(tail in err, f"tagflow run: no {tail!r}")
        else:
            with h5py.File(sys.argv[8]) as results:
                attribute = results.attrs["damaged_tail"]
                attribute = attribute.decode() if isinstance(attribute, bytes) else attribute
                require((attribute == "") == (tail is None) and (tail is None or tail in attribute),
                        f"tagflow run: damaged_tail attribute {attribute!r}")
                counts = results["rates/counts_total"][()]
            tags = np.frombuffer(read, dtype=[("type", "u1"), ("reserved", "u1"),
                                              ("missed", "<u2"), ("channel", "<i4"),
                                              ("time", "<i8")])
            # Countrate counts each channel's TimeTags and the events its MissedEvents lost.
            missed = tags["type"] == 4
            expected_counts = [
                int(((tags["type"] == 0) & (tags["channel"] == c)).sum())
                + int(tags["missed"][missed & (tags["channel"] == c)].sum())
                for c in (1, 2)
            ]
            require(list(counts) == expected_counts,
                    f"tagflow run: counts {list(counts)} where the file holds {expected_counts}")
        summary += "; tagflow run agrees"
    print(summary)


main()

#!/usr/bin/env python3
"""rawclient.py — hostile and broken clients for xmemd's frame tests.

usage: rawclient.py SOCKET CASE   prints the reply's outcome name (or "noreply")
"""
import json
import os
import socket
import struct
import sys
import time

MAGIC, VERSION = 0x584D454D, 1
ESTIMATE, STATUS, JOB_END = 1, 2, 4


def header(typ, length, magic=MAGIC, version=VERSION, flags=0):
    return struct.pack(">IHHII", magic, version, typ, length, flags)


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(path)
    return s


def reply(s, whole=False):
    data = b""
    try:
        while len(data) < 16:
            chunk = s.recv(16 - len(data))
            if not chunk:
                return "noreply"
            data += chunk
        magic, version, typ, length, flags = struct.unpack(">IHHII", data)
        body = b""
        while len(body) < length:
            chunk = s.recv(length - len(body))
            if not chunk:
                return "truncated-reply"
            body += chunk
        answer = json.loads(body)
        return json.dumps(answer) if whole else answer["outcome_name"]
    except (ConnectionResetError, socket.timeout):
        return "noreply"


def main():
    path, case = sys.argv[1], sys.argv[2]
    s = connect(path)
    good = json.dumps({"argv": ["python3", "t.py"], "cwd": os.environ.get("RAW_CWD", "/tmp")}).encode()
    if case == "claim-root":
        # A well-formed estimate whose body claims to come from root: the uid must come
        # from the kernel, never from the message.
        body = json.dumps({"argv": ["python3", "train.py"], "uid": 0, "user": "root",
                           "cwd": os.environ.get("RAW_CWD", "/tmp")}).encode()
        s.sendall(header(ESTIMATE, len(body)) + body)
    elif case == "bad-json":
        body = b"{not json"
        s.sendall(header(ESTIMATE, len(body)) + body)
    elif case == "not-object":
        body = b"[1,2]"
        s.sendall(header(STATUS, len(body)) + body)
    elif case == "bad-fields":
        body = json.dumps({"argv": "python3 t.py", "cwd": "/tmp"}).encode()
        s.sendall(header(ESTIMATE, len(body)) + body)
    elif case == "foreign-script":
        # A script path through another user's /proc/PID/cwd (issue 26, M1): prints the
        # whole reply, whose message must not quote the file.
        body = json.dumps({"argv": ["python3", "train.py"], "cwd": os.environ["RAW_CWD"],
                           "script": os.environ["RAW_SCRIPT"]}).encode()
        s.sendall(header(ESTIMATE, len(body)) + body)
        print(reply(s, whole=True))
        return
    elif case == "preamble":
        # An estimate whose preamble (RAW_PREAMBLE, one line each) the plugin never
        # classified: a raw client sends what it likes, without a script to bind it.
        lines = os.environ["RAW_PREAMBLE"].split("\n")
        body = json.dumps({"argv": ["python3", "train.py"], "cwd": os.environ["RAW_CWD"],
                           "preamble": [{"line": i + 1, "text": t} for i, t in enumerate(lines)]}).encode()
        s.sendall(header(ESTIMATE, len(body)) + body)
    elif case == "job-end-huge-id":
        # A job id past Slurm's 32 bits (2^64-1): the C client cannot send one, a raw one can.
        body = json.dumps({"request_id": int(os.environ["RAW_REQUEST"]), "job_id": 2**64 - 1,
                           "exit_status": 0, "elapsed_seconds": 5, "cuda_oom": False,
                           "job_uid": int(os.environ["RAW_UID"])}).encode()
        s.sendall(header(JOB_END, len(body)) + body)
    elif case == "bad-magic":
        s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    elif case == "bad-version":
        s.sendall(header(STATUS, 2, version=9) + b"{}")
    elif case == "bad-type":
        s.sendall(header(77, 2) + b"{}")
    elif case == "reply-type":
        s.sendall(header(128, 2) + b"{}")
    elif case == "oversized":
        # Announce 64 MiB and send only the header: refused before any body is read.
        s.sendall(header(ESTIMATE, 64 << 20))
    elif case == "trailing":
        s.sendall(header(STATUS, 2) + b"{}" + b"extra")
    elif case == "truncated":
        s.sendall(header(ESTIMATE, len(good)) + good[:10])
        s.close()
        print("noreply")
        return
    elif case == "half-header":
        s.sendall(header(ESTIMATE, len(good))[:7])
        s.close()
        print("noreply")
        return
    elif case == "stall":
        s.sendall(header(ESTIMATE, len(good)) + good[:5])  # then nothing: frame timeout
    elif case == "disconnect-mid-request":
        s.sendall(header(ESTIMATE, len(good)) + good)
        s.close()
        print("noreply")
        return
    elif case == "never-read":
        # Send many requests on many connections and never read the replies.
        socks = [connect(path) for _ in range(50)]
        for c in socks:
            c.sendall(header(STATUS, 2) + b"{}")
        time.sleep(1)
        for c in socks:
            c.close()
        print("noreply")
        return
    elif case == "flood-bytes":
        # Stream garbage without a valid header: refused after the first 16 bytes.
        try:
            s.sendall(b"\xff" * (1 << 20))
        except (BrokenPipeError, ConnectionResetError):
            pass
    else:
        raise SystemExit("unknown case " + case)
    print(reply(s))


main()

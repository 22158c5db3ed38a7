"""httpbin, plus endpoints the tests need that httpbin lacks.

httpbin's /post echoes only the first file of each key and never the filename. The
routes below let werkzeug, the same parser, report everything it saw:

  /multipart  parses a multipart/form-data body and returns every field and every file
              (key, filename, content type, size, SHA-256, content) in the order received.
  /sink       reads the body without parsing or keeping it and returns its size, framing
              (Content-Length or chunked), SHA-256 and last bytes: for uploads of any size.
              ?sha256=1 hashes the body; ?slow=1 reads it at about 10 MB/s, so that a test can
              act while an upload is still running.
  /cut        answers 200 and breaks the connection in the middle of the body: a
              Content-Length of 100 with 7 bytes sent, or with ?chunked=1 a chunked body
              whose last chunk never comes. What a load balancer or a crashing upstream
              does to a response.

Served by scripts/test.sh (gunicorn swiftconnect_testserver:app); every httpbin route is
unchanged.
"""

import base64
import hashlib
import time

from flask import Response, jsonify, request
from httpbin import app


def _framing():
    return {
        "content_length": request.headers.get("Content-Length"),
        "transfer_encoding": request.headers.get("Transfer-Encoding"),
        "content_type": request.headers.get("Content-Type"),
    }


@app.route("/multipart", methods=["POST", "PUT", "PATCH"])
def multipart_echo():
    fields = [[name, value] for name, value in request.form.items(multi=True)]
    files = []
    for key, storage in request.files.items(multi=True):
        content = storage.read()
        files.append({
            "key": key,
            "filename": storage.filename,
            "content_type": storage.content_type,
            "size": len(content),
            "sha256": hashlib.sha256(content).hexdigest(),
            "content_base64": base64.b64encode(content[:65536]).decode("ascii"),
        })
    return jsonify(fields=fields, files=files, **_framing())


@app.route("/sink", methods=["POST", "PUT"])
def sink():
    stream = request.stream
    digest = hashlib.sha256() if request.args.get("sha256") else None
    slow = bool(request.args.get("slow"))
    size = 0
    tail = b""
    while True:
        chunk = stream.read(65536 if slow else 1 << 20)
        if not chunk:
            break
        if slow:
            time.sleep(0.006)
        size += len(chunk)
        if digest is not None:
            digest.update(chunk)
        tail = (tail + chunk)[-256:]
    return jsonify(
        bytes=size,
        sha256=digest.hexdigest() if digest is not None else None,
        tail_base64=base64.b64encode(tail).decode("ascii"),
        **_framing(),
    )


@app.route("/cut", methods=["GET", "POST", "PUT", "DELETE"])
def cut():
    def body():
        yield b'{"a":1}'
        if request.args.get("chunked"):
            # Raised after the first chunk went out: gunicorn can only close the connection.
            raise ConnectionAbortedError("the body is cut here on purpose")

    if request.args.get("chunked"):
        return Response(body(), content_type="application/json")
    # Fewer bytes than the Content-Length: gunicorn sends them and closes the connection.
    return Response(body(), content_type="application/json", headers={"Content-Length": "100"})

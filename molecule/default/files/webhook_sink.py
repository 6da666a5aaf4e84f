"""A webhook receiver for the lab's Alertmanager: every POST body (one JSON
notification) is appended as one line to the file named on the command line.

    python3 webhook_sink.py 127.0.0.1:9099 /var/tmp/gpuhpc-alerts.jsonl
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def main():
    host, port = sys.argv[1].rsplit(':', 1)
    path = sys.argv[2]

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
            with open(path, 'a', encoding='utf-8') as out:
                out.write(json.dumps(json.loads(body)) + '\n')
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    HTTPServer((host, int(port)), Sink).serve_forever()


if __name__ == '__main__':
    main()

"""lab/summary.py lists a published URL as answering only when something
answers there (Grafana is not installed where its repository is out of
reach)."""
import http.server
import importlib.util
import os
import socket
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location('lab_summary_script', os.path.join(ROOT, 'lab', 'summary.py'))
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)


class NotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_server_answers_whatever_its_status():
    server = http.server.HTTPServer(('127.0.0.1', 0), NotFound)
    threading.Thread(target=server.handle_request, daemon=True).start()
    try:
        assert summary.answers('http://127.0.0.1:%d' % server.server_port)
    finally:
        server.server_close()


def test_a_closed_port_does_not_answer():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    assert not summary.answers('http://127.0.0.1:%d' % port)

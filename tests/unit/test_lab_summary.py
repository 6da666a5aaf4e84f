"""lab/summary.py lists a published URL only when something
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


def test_only_what_answers_is_listed_with_its_url():
    ports = [{'service': 'prometheus', 'url': 'http://127.0.0.1:9090'},
             {'service': 'grafana', 'url': 'http://127.0.0.1:3000'}]
    lines = summary.published_lines(ports, lambda url: url.endswith(':9090'))
    assert lines == ['published on 127.0.0.1:',
                     '  prometheus http://127.0.0.1:9090',
                     'not answering, so not listed: grafana (not installed, or not up)']
    assert not any('3000' in line for line in lines)
    assert summary.published_lines(ports, lambda url: False) == [
        'not answering, so not listed: prometheus, grafana (not installed, or not up)']

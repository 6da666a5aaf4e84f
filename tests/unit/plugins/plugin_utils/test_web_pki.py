import datetime
import json
import os
import stat

import bcrypt
import pytest
from cryptography import x509

from ansible_collections.gpuhpc.slurm.plugins.plugin_utils import web_pki


def load(pem):
    return x509.load_pem_x509_certificate(pem.encode())


def test_first_run_makes_a_ca_and_a_host_certificate_for_every_name(tmp_path):
    out = web_pki.ensure(str(tmp_path), 'gpu-01', ['10.0.0.5', 'gpu-01.example.org', 'localhost'])
    assert out['made'] == ['ca', 'gpu-01']
    cert, ca = load(out['cert']), load(out['ca'])
    assert cert.issuer == ca.subject
    assert web_pki.cert_names(cert) == ['10.0.0.5', 'gpu-01.example.org', 'localhost']
    assert stat.S_IMODE(os.stat(tmp_path / 'ca-key.pem').st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / 'hosts' / 'gpu-01-key.pem').st_mode) == 0o600
    assert 'PRIVATE KEY' in out['key']


def test_a_rerun_makes_nothing_and_gives_the_same_files(tmp_path):
    first = web_pki.ensure(str(tmp_path), 'ctl', ['ctl', 'localhost'])
    again = web_pki.ensure(str(tmp_path), 'ctl', ['localhost', 'ctl', 'ctl'])
    assert again['made'] == []
    assert (again['ca'], again['cert'], again['key']) == (first['ca'], first['cert'], first['key'])


def test_a_new_name_makes_a_new_host_certificate_under_the_same_ca(tmp_path):
    first = web_pki.ensure(str(tmp_path), 'mon', ['mon'])
    again = web_pki.ensure(str(tmp_path), 'mon', ['mon', '192.0.2.7'])
    assert again['made'] == ['mon']
    assert again['ca'] == first['ca']
    assert web_pki.cert_names(load(again['cert'])) == ['192.0.2.7', 'mon']


def test_check_mode_writes_nothing(tmp_path):
    out = web_pki.ensure(str(tmp_path / 'pki'), 'n1', ['n1'], dry_run=True)
    assert out['made'] == ['ca', 'n1']
    assert not (tmp_path / 'pki' / 'ca.pem').exists()
    assert not (tmp_path / 'pki' / 'hosts' / 'n1.pem').exists()


def test_the_site_ca_signs_and_a_change_of_ca_makes_new_host_certificates(tmp_path):
    private = web_pki.ensure(str(tmp_path / 'pki'), 'n1', ['n1'])
    ca_cert, ca_key = web_pki.make_ca('Site CA')
    (tmp_path / 'site.pem').write_text(web_pki._cert_pem(ca_cert))
    (tmp_path / 'site-key.pem').write_text(web_pki._key_pem(ca_key))
    site = web_pki.ensure(str(tmp_path / 'pki'), 'n1', ['n1'], ca_cert_path=str(tmp_path / 'site.pem'),
                          ca_key_path=str(tmp_path / 'site-key.pem'))
    assert site['made'] == ['n1']
    assert load(site['cert']).issuer == ca_cert.subject != load(private['ca']).subject


def test_a_certificate_close_to_its_end_is_made_again(tmp_path):
    out = web_pki.ensure(str(tmp_path), 'n1', ['n1'], days=20)
    cert, ca = load(out['cert']), load(out['ca'])
    assert not web_pki.host_cert_current(cert, ['n1'], ca)
    assert web_pki.ensure(str(tmp_path), 'n1', ['n1'])['made'] == ['n1']
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=800)
    fresh = load(web_pki.ensure(str(tmp_path), 'n1', ['n1'])['cert'])
    assert web_pki.host_cert_current(fresh, ['n1'], ca)
    assert not web_pki.host_cert_current(fresh, ['n1'], ca, now=later)


def _ca_ending_in(tmp_path, days, key):
    """The private CA of key in tmp_path, as if made long ago: days left."""
    cert = web_pki.make_ca('gpuhpc.slurm cluster CA', days=days, key=key)[0]
    (tmp_path / 'ca.pem').write_text(web_pki._cert_pem(cert))
    (tmp_path / 'ca-key.pem').write_text(web_pki._key_pem(key))
    return cert


def test_the_private_ca_is_renewed_with_its_key_once_a_host_certificate_would_outlive_it(tmp_path):
    key = web_pki.make_ca('gpuhpc.slurm cluster CA')[1]
    old = _ca_ending_in(tmp_path, 2000, key)
    first = web_pki.ensure(str(tmp_path), 'n1', ['n1'])
    assert first['made'] == ['n1'] and load(first['ca']) == old
    # 800 days left: a new 825-day host certificate would outlive it
    old = _ca_ending_in(tmp_path, 800, key)
    renewed = web_pki.ensure(str(tmp_path), 'n2', ['n2'])
    new = load(renewed['ca'])
    assert renewed['made'] == ['ca renewed', 'n2']
    assert new.subject == old.subject and new.public_key() == old.public_key()
    assert web_pki._not_after(new) > web_pki._not_after(old) + datetime.timedelta(days=2800)
    # what the old certificate signed stays, and is valid under the renewed one
    again = web_pki.ensure(str(tmp_path), 'n1', ['n1'])
    assert again['made'] == [] and again['cert'] == first['cert']
    load(again['cert']).verify_directly_issued_by(new)
    # and the next run renews nothing
    assert web_pki.ensure(str(tmp_path), 'n2', ['n2'])['made'] == []


def test_a_host_certificate_ends_with_a_site_ca_that_ends_first_and_is_not_made_again_each_run(tmp_path):
    key = web_pki.make_ca('Site CA')[1]
    ca = web_pki.make_ca('Site CA', days=100, key=key)[0]
    (tmp_path / 'site.pem').write_text(web_pki._cert_pem(ca))
    (tmp_path / 'site-key.pem').write_text(web_pki._key_pem(key))
    site = dict(ca_cert_path=str(tmp_path / 'site.pem'), ca_key_path=str(tmp_path / 'site-key.pem'))
    first = web_pki.ensure(str(tmp_path / 'pki'), 'n1', ['n1'], **site)
    assert first['made'] == ['n1']
    assert web_pki._not_after(load(first['cert'])) == web_pki._not_after(ca)
    assert web_pki.ensure(str(tmp_path / 'pki'), 'n1', ['n1'], **site)['made'] == []
    # within its last 30 days too: a new one could not last longer
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=80)
    assert web_pki.host_cert_current(load(first['cert']), ['n1'], ca, now=later)


@pytest.mark.parametrize('kwargs, words', [
    (dict(pki_dir='relative/pki'), 'is not an absolute path'),
    (dict(ca_cert_path='/site/ca.pem'), 'go together'),
    (dict(names=['', ' ']), None),
])
def test_bad_input_is_refused_by_name(tmp_path, kwargs, words):
    args = dict(pki_dir=str(tmp_path), host='n1', names=['n1'])
    args.update(kwargs)
    if words is None:
        # the inventory name is always a name; an empty list of others is fine
        args['names'] = args['names'] + ['n1']
        assert web_pki.ensure(**args)['cert']
        return
    with pytest.raises(web_pki.PkiError, match=words):
        web_pki.ensure(**args)


def test_an_unreadable_site_ca_is_named(tmp_path):
    (tmp_path / 'bad.pem').write_text('not a certificate')
    with pytest.raises(web_pki.PkiError, match='bad.pem.*cannot be read'):
        web_pki.ensure(str(tmp_path), 'n1', ['n1'], ca_cert_path=str(tmp_path / 'bad.pem'),
                       ca_key_path=str(tmp_path / 'bad.pem'))


def test_the_hash_is_stable_per_host_and_user_and_checks_the_password():
    salt = web_pki.bcrypt_salt('gpu-01', 'prometheus')
    assert salt == web_pki.bcrypt_salt('gpu-01', 'prometheus') != web_pki.bcrypt_salt('gpu-02', 'prometheus')
    assert len(salt) == 22 and salt[-1] in '.Oeu'
    digest = web_pki.bcrypt_hash('p@ss "word" with: punctuation', salt, rounds=4)
    assert digest == web_pki.bcrypt_hash('p@ss "word" with: punctuation', salt, rounds=4)
    assert bcrypt.checkpw(b'p@ss "word" with: punctuation', digest.encode())
    assert not bcrypt.checkpw(b'other', digest.encode())


@pytest.mark.parametrize('username, password, words', [
    ('prometheus', '', 'web_config_password is empty'),
    ('', 'secret', "web_config_username '' is empty"),
    ('a:b', 'secret', "holds ':'"),
    ('prometheus', 'x' * 73, 'longer than 72 bytes'),
])
def test_user_problems_are_named_without_the_password(username, password, words):
    problems = web_pki.check_user(username, password)
    assert len(problems) == 1 and words in problems[0]
    assert not password or password not in problems[0]


def test_the_document_is_exporter_toolkit_web_config():
    doc = json.loads(web_pki.document('/etc/c.pem', '/etc/k.pem', 'prometheus', '$2b$10$x'))
    assert doc == {'tls_server_config': {'cert_file': '/etc/c.pem', 'key_file': '/etc/k.pem'},
                   'basic_auth_users': {'prometheus': '$2b$10$x'}}


def test_a_client_gets_the_same_ca_as_the_hosts(tmp_path):
    first = web_pki.ca_only(str(tmp_path))
    assert first['made'] == ['ca']
    host = web_pki.ensure(str(tmp_path), 'n1', ['n1'])
    assert host['made'] == ['n1'] and host['ca'] == first['ca'] == web_pki.ca_only(str(tmp_path))['ca']
    assert web_pki.ca_only(str(tmp_path / 'dry'), dry_run=True)['made'] == ['ca']
    assert not (tmp_path / 'dry' / 'ca.pem').exists()


def test_a_strict_verifier_accepts_the_chain(tmp_path):
    # Python 3.13's default context is X509_STRICT: key identifiers and key usage are needed.
    import socket
    import ssl
    import threading
    out = web_pki.ensure(str(tmp_path), 'n1', ['127.0.0.1', 'localhost'])
    for name in ('ca', 'cert', 'key'):
        (tmp_path / (name + '.pem')).write_text(out[name])
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(tmp_path / 'cert.pem'), str(tmp_path / 'key.pem'))
    client = ssl.create_default_context(cafile=str(tmp_path / 'ca.pem'))
    client.verify_flags |= getattr(ssl, 'VERIFY_X509_STRICT', 0)
    listener = socket.create_server(('127.0.0.1', 0))
    port = listener.getsockname()[1]

    def accept():
        conn = listener.accept()[0]
        try:
            with server.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)
        except (ssl.SSLError, OSError):
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    with socket.create_connection(('127.0.0.1', port)) as raw:
        with client.wrap_socket(raw, server_hostname='localhost') as tls:
            assert tls.version() in ('TLSv1.2', 'TLSv1.3')
            tls.sendall(b'x')
    thread.join(5)
    listener.close()

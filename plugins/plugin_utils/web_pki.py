# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The web config of the collection's HTTP endpoints, made on the controller.

A cluster CA (the site's, or a private one made once in the PKI folder), a
certificate per host signed by it, the bcrypt hash of the scrape password,
and the exporter-toolkit web config document that names them. Pure functions
and the PKI folder only: plugins/action/web_config.py puts the result on the
host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import fcntl
import hashlib
import importlib.util
import ipaddress
import json
import os

# cryptography is imported by the functions that use it, as bcrypt is: the
# web_config filter file imports this module, and Ansible loads each filter
# file of the collection in every task's worker that looks up one of its
# filters (tens of milliseconds per worker for cryptography alone).

# A certificate is made again when it has less than this left.
RENEW_BEFORE = datetime.timedelta(days=30)
# How long the private CA is valid; it is renewed (same key and name) once a
# host certificate made now would outlive it.
CA_DAYS = 3650
# bcrypt's alphabet; the 22nd character of a salt carries 2 bits only.
_BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
_BCRYPT_LAST = '.Oeu'


class PkiError(Exception):
    """Bad input or an unusable PKI folder, in words that name the fix."""


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _not_after(cert):
    if hasattr(cert, 'not_valid_after_utc'):
        return cert.not_valid_after_utc
    return cert.not_valid_after.replace(tzinfo=datetime.timezone.utc)


def san_names(names):
    """Sorted unique subject alternative names: IP addresses as such, the rest as DNS names."""
    out = []
    for name in names:
        name = str(name).strip().strip('[]')
        if name and name not in out:
            out.append(name)
    return sorted(out)


def _general_names(names):
    from cryptography import x509
    out = []
    for name in san_names(names):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            out.append(x509.DNSName(name))
    return out


def cert_names(cert):
    """The subject alternative names of a certificate, as san_names gives them."""
    from cryptography import x509
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return san_names([str(v) for v in ext.get_values_for_type(x509.DNSName)]
                     + [str(v) for v in ext.get_values_for_type(x509.IPAddress)])


def _key_pem(key):
    from cryptography.hazmat.primitives import serialization
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _cert_pem(cert):
    from cryptography.hazmat.primitives import serialization
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _write(path, text, mode):
    tmp = path + '.tmp'
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.rename(tmp, path)


def _load_ca(cert_path, key_path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    try:
        with open(cert_path, 'rb') as f:
            cert = x509.load_pem_x509_certificate(f.read())
        with open(key_path, 'rb') as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
    except (OSError, ValueError, TypeError) as e:
        raise PkiError('the CA %s / %s cannot be read (%s): give a PEM certificate and its unencrypted key'
                       % (cert_path, key_path, e))
    return cert, key


def make_ca(common_name, days=CA_DAYS, key=None, subject=None):
    """A self-signed CA: (certificate, key). With the key and subject (an x509.Name) of a CA, that CA
    renewed: what it signed stays valid under the new certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = key or ec.generate_private_key(ec.SECP256R1())
    name = subject or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = _now()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def make_host_cert(host, names, ca_cert, ca_key, days):
    """A server certificate for host, for every name in names, signed by the CA: (certificate, key).
    It ends after days, or with the CA if that is sooner."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(min(now + datetime.timedelta(days=days), _not_after(ca_cert)))
            .add_extension(x509.SubjectAlternativeName(_general_names(names)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=False, crl_sign=False,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            # strict verifiers (OpenSSL's X509_STRICT, Python 3.13's default) want both
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


def host_cert_current(cert, names, ca_cert, now=None):
    """Whether cert may stay: issued by the CA, for exactly these names, not about to expire (or
    ending with the CA, which a new one could not outlive), not outliving the CA."""
    from cryptography import x509
    now = now or _now()
    try:
        aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier
    except x509.ExtensionNotFound:
        aki = None
    return (cert.issuer == ca_cert.subject
            and aki == x509.SubjectKeyIdentifier.from_public_key(ca_cert.public_key()).digest
            and cert_names(cert) == san_names(names)
            and (_not_after(cert) - now > RENEW_BEFORE or _not_after(cert) == _not_after(ca_cert))
            and _not_after(ca_cert) >= _not_after(cert))


def _ca(pki_dir, ca_cert_path, ca_key_path, ca_name, dry_run, made, days):
    """The CA (certificate, key): the site's, or the private one of pki_dir, made when missing and
    renewed (same key and name: the certificates it signed stay valid) once a host certificate of
    days made now would outlive it. A site CA is the site's to renew; a host certificate ends with it."""
    if ca_cert_path:
        return _load_ca(ca_cert_path, ca_key_path)
    ca_cert_path, ca_key_path = os.path.join(pki_dir, 'ca.pem'), os.path.join(pki_dir, 'ca-key.pem')
    key = subject = None
    if os.path.exists(ca_cert_path):
        ca_cert, key = _load_ca(ca_cert_path, ca_key_path)
        if _not_after(ca_cert) - _now() >= datetime.timedelta(days=days) + RENEW_BEFORE:
            return ca_cert, key
        subject = ca_cert.subject
    ca_cert, ca_key = make_ca(ca_name, key=key, subject=subject)
    if not dry_run:
        _write(ca_key_path, _key_pem(ca_key), 0o600)
        _write(ca_cert_path, _cert_pem(ca_cert), 0o644)
    made.append('ca renewed' if key else 'ca')
    return ca_cert, ca_key


def _checked(pki_dir, ca_cert_path, ca_key_path):
    if not pki_dir or not os.path.isabs(pki_dir):
        raise PkiError("web_config_pki_dir '%s' is not an absolute path on the Ansible controller" % pki_dir)
    if bool(ca_cert_path) != bool(ca_key_path):
        raise PkiError('web_config_ca_cert and web_config_ca_key go together: give both (the site CA) or neither '
                       '(a private CA in web_config_pki_dir)')
    try:
        os.makedirs(os.path.join(pki_dir, 'hosts'), mode=0o700, exist_ok=True)
    except OSError as e:
        raise PkiError("web_config_pki_dir '%s' cannot be made on the Ansible controller: %s" % (pki_dir, e))
    return os.path.join(pki_dir, '.lock')


def ca_only(pki_dir, ca_cert_path='', ca_key_path='', ca_name='gpuhpc.slurm cluster CA', dry_run=False, days=825):
    """The CA's certificate (PEM), for a client that only checks the others: {'ca': PEM, 'made': [...]}."""
    if not have_cryptography():
        raise PkiError(NO_CRYPTOGRAPHY)
    lock_path, made = _checked(pki_dir, ca_cert_path, ca_key_path), []
    with open(lock_path, 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ca_cert = _ca(pki_dir, ca_cert_path, ca_key_path, ca_name, dry_run, made, days)[0]
    return {'ca': _cert_pem(ca_cert), 'made': made}


NO_CRYPTOGRAPHY = ('web_config_enabled makes certificates on the Ansible controller with the Python module '
                   'cryptography, which the Python that runs ansible-playbook lacks: pip install cryptography there')


def have_cryptography():
    """Whether the controller's Python can make certificates."""
    # Without importing it: the preflight asks this on every host.
    return importlib.util.find_spec('cryptography') is not None


def ensure(pki_dir, host, names, days=825, ca_cert_path='', ca_key_path='', ca_name='gpuhpc.slurm cluster CA',
           dry_run=False):
    """The CA and host's certificate and key, made in pki_dir when missing or no longer right.

    dry_run (check mode): what is missing is made in memory only.

    Returns {'ca': PEM, 'cert': PEM, 'key': PEM, 'made': [what was made]}. Safe
    to run for many hosts at once (one lock on the folder).
    """
    if not have_cryptography():
        raise PkiError(NO_CRYPTOGRAPHY)
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    if not san_names(names):
        raise PkiError('no name to put in the certificate of %s' % host)
    lock_path, made = _checked(pki_dir, ca_cert_path, ca_key_path), []
    with open(lock_path, 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ca_cert, ca_key = _ca(pki_dir, ca_cert_path, ca_key_path, ca_name, dry_run, made, days)
        cert_path = os.path.join(pki_dir, 'hosts', host + '.pem')
        key_path = os.path.join(pki_dir, 'hosts', host + '-key.pem')
        cert = key = None
        if os.path.exists(cert_path) and os.path.exists(key_path):
            with open(cert_path, 'rb') as f:
                cert = x509.load_pem_x509_certificate(f.read())
            with open(key_path, 'rb') as f:
                key = serialization.load_pem_private_key(f.read(), password=None)
            if not host_cert_current(cert, names, ca_cert):
                cert = None
        if cert is None:
            cert, key = make_host_cert(host, names, ca_cert, ca_key, days)
            if not dry_run:
                _write(key_path, _key_pem(key), 0o600)
                _write(cert_path, _cert_pem(cert), 0o644)
            made.append(host)
    return {'ca': _cert_pem(ca_cert), 'cert': _cert_pem(cert), 'key': _key_pem(key), 'made': made}


def bcrypt_salt(*parts):
    """A bcrypt salt (22 characters) derived from parts: the same hash on every run, until a part changes."""
    digest = hashlib.sha256(json.dumps(list(parts)).encode()).digest()
    salt = ''.join(_BCRYPT_ALPHABET[b % 64] for b in digest[:21])
    return salt + _BCRYPT_LAST[digest[21] % 4]


NO_BCRYPT = ('web_config_password is hashed with bcrypt on the Ansible controller, and the Python that runs '
             'ansible-playbook has no bcrypt module: pip install bcrypt there')


def have_bcrypt():
    """Whether the controller's Python can hash with bcrypt."""
    try:
        import bcrypt  # noqa: F401 pylint: disable=unused-import
    except ImportError:
        return False
    return True


def bcrypt_hash(password, salt, rounds=10):
    """bcrypt of password (2b, rounds), with the given salt."""
    try:
        import bcrypt
    except ImportError:
        raise PkiError(NO_BCRYPT)
    return bcrypt.hashpw(password.encode(), ('$2b$%02d$%s' % (rounds, salt)).encode()).decode()


def check_user(username, password):
    """Problems with the basic auth user and password, never showing the password."""
    problems = []
    if not isinstance(username, str) or not username or ':' in username:
        problems.append("web_config_username '%s' is empty or holds ':', which HTTP basic auth cannot carry" % username)
    if not isinstance(password, str) or not password:
        problems.append('web_config_password is empty: web_config_enabled needs the scrape password (vault it)')
    elif len(password.encode()) > 72:
        problems.append('web_config_password is longer than 72 bytes, and bcrypt ignores what follows byte 72: '
                        'choose a shorter one')
    return problems


def document(cert_file, key_file, username, password_hash):
    """The exporter-toolkit web config (JSON, which is YAML too): TLS and one basic auth user."""
    return json.dumps({'tls_server_config': {'cert_file': cert_file, 'key_file': key_file},
                       'basic_auth_users': {username: password_hash}}, indent=2, sort_keys=True) + '\n'

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

import pytest
from ansible_collections.gpuhpc.slurm.plugins.module_utils.munge import (
    MungeKeyError,
    decode_key,
    fingerprint,
)

KEY = bytes(range(256)) * 4  # 1024 bytes, not valid UTF-8


def test_decodes_binary_key_intact():
    assert decode_key(base64.b64encode(KEY).decode()) == KEY


def test_whitespace_and_newlines_are_ignored():
    text = base64.encodebytes(KEY).decode()  # wrapped at 76 columns
    assert '\n' in text
    assert decode_key(text) == KEY


def test_exactly_32_bytes_is_enough():
    assert len(decode_key(base64.b64encode(b'k' * 32).decode())) == 32


@pytest.mark.parametrize('text, expected', [
    (base64.b64encode(b'k' * 31).decode(), 'is 31 bytes long once decoded'),
    ('c2hvcnQ=', 'is 5 bytes long once decoded'),
    ('not base64 at all!', 'is not valid base64'),
    ('QUJDRA', 'is not valid base64'),
    ('', 'is empty'),
    ('   ', 'is empty'),
    (None, 'is empty'),
])
def test_bad_keys_name_the_variable_and_the_fix(text, expected):
    with pytest.raises(MungeKeyError) as err:
        decode_key(text, 'my_var')
    message = str(err.value)
    assert message.startswith('my_var ')
    assert expected in message
    if text and text.strip():
        assert text.strip() not in message


def test_fingerprint_is_short_and_stable():
    assert fingerprint(KEY) == fingerprint(bytes(KEY))
    assert len(fingerprint(KEY)) == 16
    assert fingerprint(KEY) != fingerprint(KEY[:-1])

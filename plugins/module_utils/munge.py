# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Munge key handling shared by the munge_key module and the munge filters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import hashlib

MUNGE_KEY_MIN_BYTES = 32
MUNGE_KEY_GENERATED_BYTES = 1024


class MungeKeyError(ValueError):
    """A munge key that munged would refuse or that is not what the user meant."""


def decode_key(text, name='munge_key'):
    """Decode a base64 munge key and check its length.

    The message of the error names ``name`` (the variable the key came from)
    and never contains the key itself.
    """
    if text is None or not str(text).strip():
        raise MungeKeyError('%s is empty: give the base64 of a key of at least %d bytes '
                            '(for example: head -c 1024 /dev/urandom | base64 -w0), '
                            'or leave it unset to have one made on the key host'
                            % (name, MUNGE_KEY_MIN_BYTES))
    compact = ''.join(str(text).split())
    try:
        key = base64.b64decode(compact.encode('ascii'), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise MungeKeyError('%s is not valid base64: give the key base64-encoded '
                            '(for example: base64 -w0 /etc/munge/munge.key)' % name)
    check_length(key, name)
    return key


def check_length(key, name):
    if len(key) < MUNGE_KEY_MIN_BYTES:
        raise MungeKeyError('%s is %d bytes long once decoded; munge needs at least %d '
                            '(1024 is usual): make a new one with '
                            'head -c 1024 /dev/urandom | base64 -w0'
                            % (name, len(key), MUNGE_KEY_MIN_BYTES))


def fingerprint(key):
    """A short, non-reversible identifier of a key, safe to print."""
    return hashlib.sha256(key).hexdigest()[:16]

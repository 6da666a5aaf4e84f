# -*- coding: utf-8 -*-
# Copyright: gpuhpc.slurm contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm hostlists: ``gpu-[01-12]`` <-> ``gpu-01, ..., gpu-12``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_TAIL_NUMBER = re.compile(r'^(.*?)(\d+)(\D*)$')


class HostlistError(ValueError):
    pass


def _split_top_level(text):
    """Split on commas that are not inside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == '[':
            depth += 1
            if depth > 1:
                raise HostlistError("nested '[' in hostlist %r" % text)
        elif c == ']':
            depth -= 1
            if depth < 0:
                raise HostlistError("unbalanced ']' in hostlist %r" % text)
        elif c == ',' and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise HostlistError("unbalanced '[' in hostlist %r" % text)
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _expand_ranges(body, whole):
    out = []
    for item in body.split(','):
        item = item.strip()
        if not item:
            raise HostlistError('empty range in hostlist %r' % whole)
        if '-' in item:
            lo, hi = item.split('-', 1)
        else:
            lo = hi = item
        if not (lo.isdigit() and hi.isdigit()):
            raise HostlistError('range %r in hostlist %r is not numeric' % (item, whole))
        if int(lo) > int(hi):
            raise HostlistError('range %r in hostlist %r goes backwards' % (item, whole))
        width = len(lo) if lo.startswith('0') else 0
        out.extend(str(n).zfill(width) for n in range(int(lo), int(hi) + 1))
    return out


def expand(hostlist):
    """Expand a hostlist expression (str) or a list of them into host names, in order."""
    items = hostlist if isinstance(hostlist, (list, tuple)) else [hostlist]
    hosts = []
    for expr in items:
        for part in _split_top_level(str(expr)):
            names = ['']
            rest = part
            while rest:
                m = re.match(r'^([^\[]*)\[([^\]]*)\](.*)$', rest)
                if not m:
                    names = [n + rest for n in names]
                    break
                prefix, body, rest = m.groups()
                names = [n + prefix + r for n in names for r in _expand_ranges(body, part)]
            for n in names:
                if n not in hosts:
                    hosts.append(n)
    return hosts


def _ranges(numbers, width):
    numbers = sorted(set(numbers))
    spans, start, prev = [], numbers[0], numbers[0]
    for n in numbers[1:]:
        if n == prev + 1:
            prev = n
            continue
        spans.append((start, prev))
        start = prev = n
    spans.append((start, prev))
    return ','.join(_fmt(a, width) if a == b else '%s-%s' % (_fmt(a, width), _fmt(b, width)) for a, b in spans)


def _fmt(number, width):
    return str(number).zfill(width)


def compress(hosts):
    """Fold host names into a Slurm hostlist expression (``gpu-[01-12],login``).

    Names ending in a number, with the same prefix, suffix and zero-padding,
    are folded into one bracket; the others are kept as they are. Groups come
    in the order of their first host.
    """
    groups, order = {}, []
    padded = {}
    parsed = []
    for host in hosts:
        host = str(host)
        m = _TAIL_NUMBER.match(host)
        parsed.append((host, m))
        if m and len(m.group(2)) > 1 and m.group(2).startswith('0'):
            padded.setdefault((m.group(1), m.group(3)), set()).add(len(m.group(2)))
    for host, m in parsed:
        if not m:
            key = (host, None, None)
        else:
            prefix, digits, suffix = m.groups()
            widths = padded.get((prefix, suffix), set())
            width = len(digits) if len(digits) in widths else 0
            key = (prefix, suffix, width)
        if key not in groups:
            groups[key] = []
            order.append(key)
        if m:
            groups[key].append(int(m.group(2)))
    out = []
    for key in order:
        prefix, suffix, width = key
        if suffix is None:
            out.append(prefix)
            continue
        numbers = groups[key]
        if len(set(numbers)) == 1:
            out.append('%s%s%s' % (prefix, str(numbers[0]).zfill(width), suffix))
        else:
            out.append('%s[%s]%s' % (prefix, _ranges(numbers, width), suffix))
    return ','.join(out)

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The e2e case metrics: a scrape of the agent's metrics against the CLI.
# Usage: metrics_check.py METRICS_FILE IFACE BEFORE_JSON AFTER_JSON < status.json
# BEFORE/AFTER: `sieve xdp stats -j` taken just before and after the
# scrape: each counter of the scrape lies between the two (drops, with no
# traffic meanwhile, equal both). stdin: `sieve xdp status -j`.
# Prints what differs and exits 1; exits 0 when all agree.
import json
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: '\n' if m.group(1) == 'n' else m.group(1), v)


def parse(text):
    """{(name, frozenset(labels)): value}, checking each line's syntax."""
    samples = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise SystemExit(f'line {n} does not parse: {line!r}')
        name, labels, value = m.groups()
        pairs = {}
        if labels:
            pos = 0
            while pos < len(labels):
                lm = LABEL.match(labels, pos)
                if not lm:
                    raise SystemExit(f'line {n}: bad labels: {labels!r}')
                pairs[lm.group(1)] = unescape(lm.group(2))
                pos = lm.end()
        key = (name, frozenset(pairs.items()))
        if key in samples:
            raise SystemExit(f'line {n}: series twice: {line!r}')
        samples[key] = float(value)
    return samples


def get(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def main():
    path, iface, before_path, after_path = sys.argv[1:5]
    with open(path, encoding='utf-8', errors='strict') as f:
        samples = parse(f.read())
    with open(before_path) as f:
        before = {d['iface']: d for d in json.load(f)}[iface]
    with open(after_path) as f:
        after = {d['iface']: d for d in json.load(f)}[iface]
    status = {d['iface']: d for d in json.load(sys.stdin)}[iface]
    bad = []

    def between(what, got, key):
        if got is None:
            bad.append(f'{what}: missing')
        elif not before[key] <= got <= after[key]:
            bad.append(f'{what} = {got:.0f}, stats -j {key} {before[key]} .. {after[key]}')

    verdicts = {('pass', 'none'): 'passed', ('drop', 'source'): 'dropped_source',
                ('drop', 'prefix'): 'dropped_prefix', ('drop', 'service'): 'dropped_service',
                ('drop', 'flow'): 'dropped_flow', ('drop', 'malformed'): 'dropped_malformed',
                ('drop', 'unparsed'): 'dropped_unparsed'}
    covered = set()
    for (verdict, kind), key in verdicts.items():
        between(f'packets {verdict}/{kind}',
                get(samples, 'sieve_xdp_packets_total', iface=iface, verdict=verdict, kind=kind),
                key)
        between(f'bytes {verdict}/{kind}',
                get(samples, 'sieve_xdp_bytes_total', iface=iface, verdict=verdict, kind=kind),
                key + '_bytes')
        covered |= {key, key + '_bytes'}
    events = {'sieve_xdp_allowed_packets_total': 'allowed',
              'sieve_xdp_allowed_bytes_total': 'allowed_bytes',
              'sieve_xdp_filter_hits_total': 'bloom_hits',
              'sieve_xdp_false_positives_total': 'false_positives',
              'sieve_xdp_malformed_packets_total': 'malformed',
              'sieve_xdp_non_ip_packets_total': 'non_ip',
              'sieve_xdp_samples_total': 'sampled',
              'sieve_xdp_samples_lost_total': 'samples_lost',
              'sieve_xdp_dry_run_passed_packets_total': 'dry_run_passed'}
    for name, key in events.items():
        between(name, get(samples, name, iface=iface), key)
        covered.add(key)
    # Every packet ends in one verdict: their sum is stats' packets.
    total = sum(v for (n, l), v in samples.items()
                if n == 'sieve_xdp_packets_total' and ('iface', iface) in l)
    between('the sum of sieve_xdp_packets_total', total, 'packets')
    covered |= {'iface', 'packets', 'bytes'}
    # Counters stats -j has that the scrape does not say: their bytes twins only.
    left = {k for k in before if k not in covered and not k.endswith('_bytes')}
    if left:
        bad.append(f'counters of stats -j not in the metrics: {sorted(left)}')
    if before['dropped_source'] != after['dropped_source'] or before['dropped_source'] != 5:
        bad.append(f'dropped_source moved or is not 5: {before["dropped_source"]}')

    lst = status['list']
    want = {
        ('sieve_xdp_up', (('iface', iface),)): 1,
        ('sieve_xdp_generation', (('iface', iface),)): status['generation'],
        ('sieve_xdp_maps_version', (('iface', iface),)): status['maps_version'],
        ('sieve_xdp_entries', (('iface', iface),)): status['entries'],
        ('sieve_xdp_capacity', (('iface', iface),)): status['capacity'],
        ('sieve_xdp_filter_memory_bytes', (('iface', iface),)): status['bloom_bytes'],
        ('sieve_xdp_exact_memory_bytes', (('iface', iface),)): status['exact_bytes'],
        ('sieve_list_version', (('list', lst),)): status['store_version'],
        ('sieve_list_entries', (('list', lst), ('action', 'block'), ('kind', 'source'),
                                ('origin', 'cli'))): 1,
        ('sieve_list_entries', (('list', lst), ('action', 'block'), ('kind', 'prefix'),
                                ('origin', 'e2e-feed'))): 1,
        # The hostile origin: its invalid byte replaced by U+FFFD, the rest as it was.
        ('sieve_list_entries', (('list', lst), ('action', 'block'), ('kind', 'source'),
                                ('origin', 'evil\n"o\x1b\ufffd'))): 1,
        ('sieve_xdp_info', (('iface', iface), ('list', lst), ('mode', status['mode']),
                            ('backend', status['backend']), ('exact', 'true'),
                            ('fail_closed', 'false'))): 1,
        ('sieve_store_up', ()): 1,
    }
    for (name, labels), value in want.items():
        got = samples.get((name, frozenset(labels)))
        if got != value:
            bad.append(f'{name}{dict(labels)} = {got}, want {value}')
    for name, key in (('sieve_xdp_expected_false_positive_ratio', 'expected_fpr'),
                      ('sieve_xdp_target_false_positive_ratio', 'target_fpr')):
        got = get(samples, name, iface=iface)
        if got is None or abs(got - status[key]) > 1e-6 * max(status[key], 1e-12):
            bad.append(f'{name} = {got}, status -j {key} {status[key]}')
    if get(samples, 'sieve_dev_up') is None:
        bad.append('no sieve_dev_up')
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

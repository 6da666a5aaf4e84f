"""Where the controller's ansible-playbook process spent a profiled run
(bench/scale.sh with GPUHPC_BENCH_PROFILE=1): its task slots (one per host
and task), and per slot the few costs that grow with the hosts. The times
are cProfile's, slower than a plain run's, so read them as shares.
  python3 bench/controller_profile.py FILE.prof"""
import pstats
import sys

# (label, file suffix, function): Ansible's and Python's own functions.
ROWS = (
    ('a worker started (one per slot)', 'executor/process/worker.py', 'start'),
    ('  of which the fork', '', 'posix.fork'),
    ('the variables of a host and task', 'vars/manager.py', 'get_vars'),
    ('  of which its facts wrapped as unsafe', 'utils/unsafe_proxy.py', 'wrap_var'),
    ('  of which the vars plugins (group_vars)', 'vars/manager.py', '_plugins_inventory'),
    ('callbacks (output, summary)', 'executor/task_queue_manager.py', 'send_callback'),
    ('results taken in', 'plugins/strategy/__init__.py', '_process_pending_results'),
    ('asleep while the workers run', '', 'time.sleep'),
)


def find(stats, suffix, name):
    """(calls, cumulative seconds) of one function; a built-in is named
    <module>.<name>, as cProfile names it, with no file."""
    calls, seconds = 0, 0.0
    # primitive calls: a recursive function's inner calls are not counted
    for (path, _line, func), (ncalls, _nc, _tt, cumtime, _callers) in stats.stats.items():
        builtin = path == '~' and func == '<built-in method %s>' % name
        if builtin or (suffix and path.endswith(suffix) and func == name):
            calls += ncalls
            seconds += cumtime
    return calls, seconds


def main(path):
    stats = pstats.Stats(path)
    total = stats.total_tt
    slots = find(stats, *ROWS[0][1:])[0]
    print('controller profile: %.1f s (profiled), %d task slots' % (total, slots))
    print('  %-42s %8s %9s %10s' % ('', 'calls', 'seconds', 'ms/slot'))
    for label, suffix, name in ROWS:
        calls, seconds = find(stats, suffix, name)
        print('  %-42s %8d %9.1f %10.1f' % (label, calls, seconds, 1000 * seconds / slots if slots else 0))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

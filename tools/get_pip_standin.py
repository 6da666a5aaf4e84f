"""Stand-in for pip's get-pip.py, for ansible-test on machines that reach a
Python package index but not the host ansible-test downloads get-pip.py from.

ansible-test runs it in a new virtual environment with pip-install arguments
(e.g. ``--disable-pip-version-check pip==24.2 --no-wheel``): pip comes from
the interpreter's own ensurepip, then the requested packages from the index.
"""
import subprocess
import sys

subprocess.check_call([sys.executable, '-m', 'ensurepip', '--default-pip'], stdout=subprocess.DEVNULL)
args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
subprocess.check_call([sys.executable, '-m', 'pip', 'install', '--quiet'] + args)

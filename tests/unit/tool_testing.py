"""Running a command-line tool's main() in the test process (much cheaper than a new
process per variant), as its user sees it: exit status, stdout, stderr."""

import pytest


def in_process(main, capsys, *args):
    """(exit status, stdout, stderr) of `main([...args])`; a traceback on stderr fails."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return info.value.code, out, err

// gcc reads its specs from the first -B directory that has one, and a spec's
// link_command is a command gcc runs. A program file named -B.c, passed to gcc as it is,
// is the option -B .c/; a file .c/specs beside it then swaps the link for any command
// (here: installing the program's own script as the binary). Passed as ./-B.c it is a
// source file like any other, and the specs file is never read.

/** The files of the attack: the program prints "compiled"; the script, had its spec run, would print PWNED. */
export const SPECS_ATTACK: Record<string, string> = {
  'main.c': '#include <stdio.h>\nint main(void) { puts("compiled"); return 0; }\n',
  '-B.c': 'int unused;\n',
  // %{pthread:} accepts the recipe's -pthread (gcc's own specs, which would, are not read).
  '.c/specs': '*link_command:\n%{pthread:} /usr/bin/install -m 755 evil.sh main\n\n',
  'evil.sh': '#!/bin/sh\necho PWNED\n',
};

// Checker and interactor programs written for the tests, in the two conventions runbox
// takes (runbox ships no testlib): a testlib-style checker, a small stand-in for
// testlib.h that a Polygon-style checker includes, a Kattis output validator, and a
// guessing game's interactors. The problem: print two integers whose sum is n (many
// answers are right); n is the first number of the input.

/** A testlib-convention checker in plain C++: argv input output answer; exit 0/1/2/3/7, message on stderr. */
export const TESTLIB_CHECKER = String.raw`
#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "FAIL usage: checker input output answer\n"); return 3; }
  FILE* in = fopen(argv[1], "r"); FILE* out = fopen(argv[2], "r"); FILE* ans = fopen(argv[3], "r");
  if (!in || !out || !ans) { fprintf(stderr, "FAIL cannot open the files\n"); return 3; }
  char word[64] = "";
  if (fscanf(ans, "%63s", word) == 1 && strcmp(word, "FAIL") == 0) { fprintf(stderr, "FAIL the answer file says so\n"); return 3; }
  long n, a, b;
  if (fscanf(in, "%ld", &n) != 1) { fprintf(stderr, "FAIL no n in the input\n"); return 3; }
  if (fscanf(out, "%ld %ld", &a, &b) != 2) { fprintf(stderr, "presentation error expected two integers\n"); return 2; }
  if (a + b == n) { fprintf(stderr, "ok %ld + %ld = %ld\n", a, b, n); return 0; }
  if (a + b == n + 1 || a + b == n - 1) { fprintf(stderr, "points 0.5 off by one\n"); return 7; }
  fprintf(stderr, "wrong answer %ld + %ld is not %ld\n", a, b, n);
  return 1;
}
`;

/** A stand-in for testlib.h: just what the Polygon-style checker below uses, as testlib spells it. */
export const TESTLIB_H = String.raw`
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
enum TResult { _ok = 0, _wa = 1, _pe = 2, _fail = 3, _points = 7 };
struct InStream {
  FILE* f = nullptr;
  long readLong();
};
InStream inf, ouf, ans;
[[noreturn]] void quitf(TResult r, const char* format, ...) {
  static const char* names[] = {"ok", "wrong answer", "wrong output format", "FAIL"};
  fprintf(stderr, "%s ", r <= _fail ? names[r] : "points");
  va_list ap; va_start(ap, format); vfprintf(stderr, format, ap); va_end(ap);
  fprintf(stderr, "\n");
  exit(r);
}
long InStream::readLong() {
  long v;
  if (!f || fscanf(f, "%ld", &v) != 1) quitf(this == &ouf ? _pe : _fail, "expected an integer");
  return v;
}
void registerTestlibCmd(int argc, char* argv[]) {
  if (argc < 4) quitf(_fail, "usage: checker input output answer");
  inf.f = fopen(argv[1], "r"); ouf.f = fopen(argv[2], "r"); ans.f = fopen(argv[3], "r");
}
`;

/** A Polygon-style checker: it includes testlib.h, one of its files. */
export const POLYGON_CHECKER = String.raw`
#include "testlib.h"
int main(int argc, char* argv[]) {
  registerTestlibCmd(argc, argv);
  long n = inf.readLong();
  long a = ouf.readLong(), b = ouf.readLong();
  if (a + b != n) quitf(_wa, "%ld + %ld is not %ld", a, b, n);
  quitf(_ok, "the sum is %ld", n);
}
`;

/** A Kattis output validator: argv input answer feedback_dir, the output on stdin, exit 42/43, judgemessage.txt, score.txt. */
export const KATTIS_VALIDATOR = String.raw`
#include <cstdio>
#include <string>
static void say(const char* dir, const char* file, const std::string& text) {
  std::string path = std::string(dir) + "/" + file;
  FILE* f = fopen(path.c_str(), "w");
  if (f) { fputs(text.c_str(), f); fclose(f); }
}
int main(int argc, char** argv) {
  if (argc < 4) return 1;
  FILE* in = fopen(argv[1], "r");
  long n, a, b;
  if (!in || fscanf(in, "%ld", &n) != 1) return 1;
  if (scanf("%ld %ld", &a, &b) != 2) { say(argv[3], "judgemessage.txt", "expected two integers"); return 43; }
  if (a + b == n) { say(argv[3], "judgemessage.txt", "the sum is right"); return 42; }
  if (a + b == n + 1) { say(argv[3], "judgemessage.txt", "off by one"); say(argv[3], "score.txt", "0.25\n"); return 42; }
  say(argv[3], "judgemessage.txt", std::to_string(a) + " + " + std::to_string(b) + " is not " + std::to_string(n));
  return 43;
}
`;

/** A solution whose answer the test's input chooses: "n ok" right, "n off" off by one, "n wrong", "n pe" (not two numbers). */
export const SUM_PROGRAM = 'n, how = input().split()\nn = int(n)\nprint({"ok": f"{n - 1} 1", "off": f"{n} 1", "wrong": f"{n * 10} 1", "pe": "x"}[how])\n';

/**
 * A guessing game's interactor: the input holds the secret (1 to 1,000,000) and the most
 * guesses allowed; to each guess it answers <, > or = on its own line. `kattis`: argv
 * input answer feedback_dir, exit 42/43, judgemessage.txt; else testlib's argv input
 * output, exit 0/1/3, the message on stderr. It ignores SIGPIPE, so a program that
 * leaves early is told so by the end of its output, not by the interactor's death.
 */
export function guessingInteractor(kattis: boolean): string {
  return String.raw`
#include <csignal>
#include <cstdio>
#include <string>
static const char* feedback = nullptr;
static int verdict(bool ok, const std::string& message) {
  if (${kattis ? 'true' : 'false'}) {
    std::string path = std::string(feedback) + "/judgemessage.txt";
    FILE* f = fopen(path.c_str(), "w");
    if (f) { fputs(message.c_str(), f); fclose(f); }
    return ok ? 42 : 43;
  }
  fprintf(stderr, "%s %s\n", ok ? "ok" : "wrong answer", message.c_str());
  return ok ? 0 : 1;
}
int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc < 3) return 3;
  feedback = argc > 3 ? argv[3] : ".";
  FILE* in = fopen(argv[1], "r");
  long secret, most;
  if (!in || fscanf(in, "%ld %ld", &secret, &most) != 2 || secret < 1) { fprintf(stderr, "FAIL bad input\n"); return 3; }
  for (long k = 1;; k++) {
    long guess;
    if (scanf("%ld", &guess) != 1) return verdict(false, "the program stopped after " + std::to_string(k - 1) + " guesses");
    if (k > most) return verdict(false, "more than " + std::to_string(most) + " guesses");
    if (guess == secret) { printf("=\n"); fflush(stdout); return verdict(true, "found in " + std::to_string(k) + " guesses"); }
    printf(guess < secret ? "<\n" : ">\n");
    fflush(stdout);
  }
}
`;
}

/** Binary search over 1..1,000,000: found within 20 guesses. */
export const GUESS_BINARY = 'lo, hi = 1, 1000000\nwhile True:\n    mid = (lo + hi) // 2\n    print(mid, flush=True)\n    r = input()\n    if r == "=": break\n    if r == "<": lo = mid + 1\n    else: hi = mid - 1\n';
/** Guesses 1, 2, 3…: too many guesses. */
export const GUESS_LINEAR = 'g = 1\nwhile True:\n    print(g, flush=True)\n    if input() == "=": break\n    g += 1\n';
/** Makes one guess and leaves without reading the answer. */
export const GUESS_ONCE = 'print(500000, flush=True)\n';
/** Makes one guess, then never reads again and never ends. */
export const GUESS_STALL = 'import time\nprint(500000, flush=True)\ntime.sleep(60)\n';

/**
 * A checker that ends as testlib's partial-credit calls end (written out, runbox ships no
 * testlib): the answer file's word chooses. "tiny": quitp(0.00000001, …), exit 7 and
 * "points 0.00000001 …"; "info": quitpi("1.0", …), exit 7 and "points points_info=1.0 …"
 * (no score); "pc": quitf(_pc(13), …), exit 13 (PC_BASE_EXIT_CODE 0 + 13) and
 * "partially correct (13) …".
 */
export const TESTLIB_PARTIAL_CHECKER = String.raw`
#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "FAIL usage: checker input output answer\n"); return 3; }
  FILE* ans = fopen(argv[3], "r");
  char word[16] = "";
  if (!ans || fscanf(ans, "%15s", word) != 1) { fprintf(stderr, "FAIL no answer\n"); return 3; }
  if (!strcmp(word, "tiny")) { fprintf(stderr, "points 0.00000001 almost nothing\n"); return 7; }
  if (!strcmp(word, "info")) { fprintf(stderr, "points points_info=1.0 answer 5 is wrong\n"); return 7; }
  if (!strcmp(word, "pc")) { fprintf(stderr, "partially correct (13) result=13\n"); return 13; }
  fprintf(stderr, "FAIL unknown answer\n");
  return 3;
}
`;

/** A Kattis output validator (Python) that accepts and says its arguments after feedback_dir, and how feedback_dir ends. */
export const KATTIS_ARGUMENTS_VALIDATOR = [
  'import sys',
  "with open(sys.argv[3] + 'judgemessage.txt', 'w') as f:",
  "    f.write('args: ' + ' '.join(sys.argv[4:]))",
  'sys.exit(42)',
  '',
].join('\n');

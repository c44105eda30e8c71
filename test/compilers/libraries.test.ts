import { expect } from 'chai';
import { readManifest } from '../../src/compilers/availability.js';
import { catalogue } from '../../src/compilers/catalogue.js';
import { loadConfig } from '../../src/config.js';
import type { RunResult } from '../../src/result.js';
import { describeCompiler, type Case } from './harness.js';

// The libraries the newest identifier of each language ships (the recipes' `libraries`):
// each is used by a program that checks a real result, in the sandbox. Plots are written
// under out/ and read back by the program, which prints what the PNG header says.

/** Succeeds with exactly this output and nothing on stderr (no warning from a library). */
function cleanly(output: string): (r: RunResult) => void {
  return (r) => {
    expect(r, r.error || (r.compile_output ?? '')).to.include({ status: 'success', exit_code: 0 });
    expect(r.output).to.equal(output);
    expect(r.error).to.equal('');
  };
}

const config = loadConfig();
const withLibraries = [...catalogue().entries.values()].filter((e) => !e.retired && e.libraries);

describe('library versions in the installed images', () => {
  for (const entry of withLibraries) {
    it(`${entry.id}: the manifest records the versions its recipe states`, function () {
      const manifest = readManifest(config.RUNBOX_IMAGES_DIR, entry.image);
      if (!manifest) {
        console.log(`      SKIPPED: image ${entry.image} not installed (runbox-admin image build ${entry.id})`);
        this.skip();
      }
      const stated = Object.fromEntries(Object.entries(entry.libraries!).map(([name, l]) => [name, l.version]));
      expect(manifest!.compilers[entry.id]?.libraries, `rootfs/${entry.image}.json`).to.deep.equal(stated);
    });
  }
});

/** A PNG's width and height, read from its IHDR chunk, in the language of the program. */
const PY_PNG_SIZE = [
  'def png_size(path):',
  "    with open(path, 'rb') as f:",
  '        head = f.read(24)',
  "    assert head[:8] == b'\\x89PNG\\r\\n\\x1a\\n', head[:8]",
  "    return int.from_bytes(head[16:20], 'big'), int.from_bytes(head[20:24], 'big')",
  '',
].join('\n');

const python: Case[] = [
  {
    name: 'numpy: solves a linear system',
    code: 'import numpy as np\na = np.array([[3.0, 1.0], [1.0, 2.0]])\nb = np.array([9.0, 8.0])\nprint(np.linalg.solve(a, b), np.arange(10).reshape(2, 5).sum(axis=1))\n',
    check: cleanly('[2. 3.] [10 35]\n'),
  },
  {
    name: 'scipy: integrates and finds a root',
    code: 'from scipy import integrate, optimize\nvalue, _ = integrate.quad(lambda x: x ** 2, 0, 3)\nroot = optimize.brentq(lambda x: x ** 3 - 8, 0, 5)\nprint(round(value, 9), round(root, 9))\n',
    check: cleanly('9.0 2.0\n'),
  },
  {
    name: 'pandas: reads CSV text and groups it',
    code: 'import io\nimport pandas as pd\ncsv = "city,sales\\nOslo,3\\nLima,5\\nOslo,4\\n"\ndf = pd.read_csv(io.StringIO(csv))\nprint(df.groupby("city")["sales"].sum().to_dict(), len(df))\n',
    check: cleanly("{'Lima': 5, 'Oslo': 7} 3\n"),
  },
  {
    name: 'matplotlib: the Agg backend saves out/plot.png with no display, and the program reads it back',
    code: [
      'import os',
      'import matplotlib',
      'import matplotlib.pyplot as plt',
      PY_PNG_SIZE,
      "os.makedirs('out', exist_ok=True)",
      'fig, ax = plt.subplots(figsize=(4, 3), dpi=100)',
      "ax.plot([0, 1, 2, 3], [0, 1, 4, 9], marker='o')",
      "ax.set_title('squares')",
      "fig.savefig('out/plot.png')",
      "print(matplotlib.get_backend().lower(), *png_size('out/plot.png'), os.path.getsize('out/plot.png') > 1000)",
      '',
    ].join('\n'),
    check: cleanly('agg 400 300 True\n'),
  },
  {
    name: 'sympy: integrates and solves symbolically',
    code: 'import sympy as sp\nx = sp.symbols("x")\nprint(sp.integrate(x ** 2, x), sp.solve(x ** 2 - 4, x), sp.factorint(360))\n',
    check: cleanly('x**3/3 [-2, 2] {2: 3, 3: 2, 5: 1}\n'),
  },
  {
    name: 'scikit-learn: fits a linear regression and classifies the bundled iris data',
    code: [
      'import numpy as np',
      'from sklearn.datasets import load_iris',
      'from sklearn.linear_model import LinearRegression',
      'from sklearn.tree import DecisionTreeClassifier',
      'x = np.arange(10).reshape(-1, 1)',
      'm = LinearRegression().fit(x, 2 * x.ravel() + 1)',
      'iris = load_iris()',
      'tree = DecisionTreeClassifier(random_state=0).fit(iris.data, iris.target)',
      'print(round(float(m.coef_[0]), 6), round(float(m.intercept_), 6), tree.score(iris.data, iris.target), iris.data.shape)',
      '',
    ].join('\n'),
    check: cleanly('2.0 1.0 1.0 (150, 4)\n'),
  },
  {
    // OpenMP sizes its pool from the host's CPUs, which the sandbox does not hide.
    name: "scikit-learn's OpenMP pool is the recipe's OMP_NUM_THREADS=2, the sandbox's cores",
    code: 'import os\nimport sklearn.cluster\nfrom threadpoolctl import threadpool_info\nprint(os.environ["OMP_NUM_THREADS"], sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "openmp"}))\n',
    check: cleanly('2 [2]\n'),
  },
  {
    name: 'networkx: a shortest path in a weighted graph',
    code: 'import networkx as nx\ng = nx.Graph()\ng.add_weighted_edges_from([("a", "b", 1), ("b", "c", 1), ("a", "c", 5), ("c", "d", 1)])\nprint(nx.shortest_path(g, "a", "d", weight="weight"), nx.shortest_path_length(g, "a", "d", weight="weight"))\n',
    check: cleanly("['a', 'b', 'c', 'd'] 3\n"),
  },
  {
    name: 'pillow: draws an image and encodes it as PNG',
    code: 'import io\nfrom PIL import Image, ImageDraw\nimg = Image.new("RGB", (32, 16), "white")\nImageDraw.Draw(img).rectangle([0, 0, 15, 15], fill="red")\nbuf = io.BytesIO()\nimg.save(buf, "PNG")\nprint(img.getpixel((3, 3)), img.getpixel((20, 3)), buf.getvalue()[:4])\n',
    check: cleanly("(255, 0, 0) (255, 255, 255) b'\\x89PNG'\n"),
  },
  {
    name: "a program's own module comes before an installed library of the same name",
    code: 'import importlib\nwith open("networkx.py", "w") as f:\n    f.write("NAME = \'mine\'\\n")\nimportlib.invalidate_caches()\nimport networkx\nprint(networkx.NAME)\n',
    check: cleanly('mine\n'),
  },
];
describeCompiler('python-3.13', python);

describeCompiler('nodejs-20', [
  {
    name: 'lodash: require finds it, and it chunks and groups',
    code: "const _ = require('lodash');\nconsole.log(JSON.stringify(_.chunk([1, 2, 3, 4, 5], 2)), JSON.stringify(_.groupBy(['one', 'two', 'three'], 'length')), _.VERSION);\n",
    check: cleanly('[[1,2],[3,4],[5]] {"3":["one","two"],"5":["three"]} 4.17.21\n'),
  },
]);

/** Whether a library is mapped into the running program, read from /proc/self/maps. */
const CPP_MAPPED = '#include <fstream>\n#include <string>\nstatic bool mapped(const std::string &lib) {\n  std::ifstream maps("/proc/self/maps");\n  for (std::string line; std::getline(maps, line);) if (line.find(lib) != std::string::npos) return true;\n  return false;\n}\n';

describeCompiler('g++-14', [
  {
    name: 'Boost: string algorithms and a 128-bit-plus factorial with Multiprecision',
    code: '#include <boost/algorithm/string.hpp>\n#include <boost/multiprecision/cpp_int.hpp>\n#include <iostream>\nint main() {\n  boost::multiprecision::cpp_int f = 1;\n  for (int i = 2; i <= 30; i++) f *= i;\n  std::cout << boost::algorithm::to_upper_copy(std::string("boost")) << " " << f << std::endl;\n}\n',
    check: cleanly('BOOST 265252859812191058636308480000000\n'),
  },
  {
    name: '{fmt}: formats, and the program that uses it loads libfmt',
    code: `#include <fmt/format.h>\n#include <vector>\n${CPP_MAPPED}int main() {\n  fmt::print("[{:>5}] {:.3f} {:#x} {}\\n", 42, 3.14159, 255, mapped("libfmt"));\n}\n`,
    check: cleanly('[   42] 3.142 0xff true\n'),
  },
  {
    name: 'a program that does not use {fmt} does not load it (-Wl,--as-needed)',
    code: `#include <iostream>\n${CPP_MAPPED}int main() { std::cout << mapped("libfmt") << " " << mapped("libstdc++") << std::endl; }\n`,
    check: cleanly('0 1\n'),
  },
  {
    name: 'nlohmann/json: parses, edits and dumps JSON',
    code: '#include <iostream>\n#include <nlohmann/json.hpp>\nint main() {\n  auto j = nlohmann::json::parse(R"({"name": "Ada", "langs": ["c", "cpp"]})");\n  j["langs"].push_back("java");\n  j["year"] = 1843;\n  std::cout << j.dump() << std::endl;\n}\n',
    check: cleanly('{"langs":["c","cpp","java"],"name":"Ada","year":1843}\n'),
  },
]);

const java = (imports: string, body: string): string =>
  `${imports}\n\npublic class Main {\n  public static void main(String[] args) throws Exception {\n${body}\n  }\n}\n`;

describeCompiler('openjdk-21', [
  {
    name: 'Gson: serialises and reads back a record',
    code: java('import com.google.gson.Gson;\nimport java.util.Map;', '    record Person(String name, int born) {}\n    Gson gson = new Gson();\n    System.out.println(gson.toJson(Map.of("name", "Ada")));\n    System.out.println(gson.fromJson("{\\"name\\":\\"Ada\\",\\"born\\":1815}", Person.class));'),
    check: cleanly('{"name":"Ada"}\nPerson[name=Ada, born=1815]\n'),
  },
  {
    name: 'Jackson: parses a tree and writes JSON',
    code: java('import com.fasterxml.jackson.databind.ObjectMapper;\nimport com.fasterxml.jackson.databind.JsonNode;\nimport java.util.List;', '    ObjectMapper m = new ObjectMapper();\n    JsonNode n = m.readTree("{\\"xs\\": [1, 2, 3]}");\n    System.out.println(n.get("xs").size() + " " + m.writeValueAsString(List.of("a", "b")));'),
    check: cleanly('3 ["a","b"]\n'),
  },
  {
    name: 'Guava: immutable collections, Joiner and a completed future',
    code: java('import com.google.common.base.Joiner;\nimport com.google.common.collect.ImmutableList;\nimport com.google.common.collect.ImmutableMultiset;\nimport com.google.common.util.concurrent.Futures;', '    var xs = ImmutableList.of("b", "a", "b");\n    System.out.println(Joiner.on("-").join(xs) + " " + ImmutableMultiset.copyOf(xs).count("b") + " " + Futures.immediateFuture(7).get());'),
    check: cleanly('b-a-b 2 7\n'),
  },
  {
    name: 'Commons Lang 3: StringUtils',
    code: java('import org.apache.commons.lang3.StringUtils;', '    System.out.println(StringUtils.capitalize("ada") + " " + StringUtils.reverse("abc") + " " + StringUtils.isBlank("  ") + " " + StringUtils.leftPad("7", 3, \'0\'));'),
    check: cleanly('Ada cba true 007\n'),
  },
  {
    name: 'Commons Math 3: descriptive statistics',
    code: java('import org.apache.commons.math3.stat.descriptive.DescriptiveStatistics;', '    var s = new DescriptiveStatistics(new double[] {2, 4, 4, 4, 5, 5, 7, 9});\n    System.out.println(s.getMean() + " " + s.getPercentile(50) + " " + s.getMax());'),
    check: cleanly('5.0 4.5 9.0\n'),
  },
]);

/** An R function that returns a PNG's width and height from its IHDR chunk. */
const R_PNG_SIZE = [
  'png_size <- function(path) {',
  "  head <- readBin(path, 'raw', 24)",
  "  stopifnot(identical(head[1:8], as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))))",
  '  be <- function(b) sum(as.integer(b) * 256^(3:0))',
  '  c(be(head[17:20]), be(head[21:24]))',
  '}',
  '',
].join('\n');

describeCompiler('r-4.2', [
  {
    name: 'ggplot2: ggsave writes out/plot.png with no display, and the program reads it back',
    code: [
      'suppressPackageStartupMessages(library(ggplot2))',
      R_PNG_SIZE,
      "dir.create('out', showWarnings = FALSE)",
      "p <- ggplot(data.frame(x = 1:10, y = (1:10)^2), aes(x, y)) + geom_line() + geom_point() + ggtitle('squares')",
      "ggsave('out/plot.png', p, width = 4, height = 3, dpi = 100)",
      "cat(png_size('out/plot.png'), file.size('out/plot.png') > 1000, '\\n')",
      '',
    ].join('\n'),
    check: cleanly('400 300 TRUE \n'),
  },
  {
    name: 'base graphics: png() draws through Cairo with no display',
    code: `${R_PNG_SIZE}dir.create('out', showWarnings = FALSE)\npng('out/hist.png', width = 320, height = 240)\nhist(c(1, 2, 2, 3, 3, 3), main = 'counts')\ninvisible(dev.off())\ncat(png_size('out/hist.png'), '\\n')\n`,
    check: cleanly('320 240 \n'),
  },
  {
    name: 'dplyr: groups and summarises',
    code: "suppressPackageStartupMessages(library(dplyr))\nd <- tibble(g = c('a', 'b', 'a'), x = c(1, 2, 3))\nr <- d %>% group_by(g) %>% summarise(total = sum(x), n = n())\ncat(r$g, r$total, r$n, '\\n')\n",
    check: cleanly('a b 4 2 2 1 \n'),
  },
  {
    name: 'data.table: aggregates by group',
    code: "suppressPackageStartupMessages(library(data.table))\ndt <- data.table(g = c('a', 'b', 'a'), x = c(1, 2, 3))\nr <- dt[, .(m = mean(x)), by = g]\ncat(r$g, r$m, '\\n')\n",
    check: cleanly('a b 2 2 \n'),
  },
  {
    name: 'tidyr: pivots a table longer',
    code: "suppressPackageStartupMessages(library(tidyr))\nd <- data.frame(id = 1:2, a = c(10, 20), b = c(30, 40))\nl <- pivot_longer(d, c(a, b))\ncat(nrow(l), l$name, l$value, '\\n')\n",
    check: cleanly('4 a b a b 10 30 20 40 \n'),
  },
  {
    name: 'stringr: detects and replaces',
    code: "library(stringr)\ncat(str_detect(c('apple', 'kiwi'), 'p'), str_replace_all('a-b-c', '-', '+'), str_pad('7', 3, pad = '0'), '\\n')\n",
    check: cleanly('TRUE FALSE a+b+c 007 \n'),
  },
]);

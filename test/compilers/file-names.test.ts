import { catalogue, offeredIds } from '../../src/compilers/catalogue.js';
import { describeCompiler } from './harness.js';
import { dashNameCase } from './recipe-programs.js';

// Every recipe, one table: a program with a file named -x.<ext> (gcc would read -B.c as
// its -B option, python3 -x.py as its -x) builds and runs as the hello program. Where an
// image is not installed, its case pends saying so.

for (const id of offeredIds(catalogue())) describeCompiler(id, dashNameCase(id));

import { PROGRAM_LIMITS } from '../limits.js';
import type { CompilerRecipe } from '../compilers/recipe.js';

// Compiler options a request adds to the compile stage (`{options}` in the recipe's
// argv). Each must match whole one of the forms its recipe allows. Whatever a recipe
// says, an option that names a path, a response file, a plugin, a wrapper or where
// output goes is never allowed: the compiler runs in the sandbox, but a path or a
// plugin would let the request choose what runs or what the run stage is handed.

/** Forms refused for every compiler (checked before the recipe's allowed forms). */
const NEVER: readonly [RegExp, string][] = [
  [/\//, 'names a path'],
  [/^@/, 'names a response file'],
  [/^-o($|[^a-z])|^--?out|^-output/, 'names the output'],
  [/^-B/, "names the compiler's own programs"],
  [/^--?specs/, 'names a specs file'],
  [/^--?wrapper/, 'names a wrapper'],
  [/^-f?plugin|^-Xplugin|^--?plugin/, 'names a plugin'],
  [/^-(I|L|isystem|include|imacros|iquote|idirafter|iprefix|iwithprefix|-?sysroot)/, 'names a search path or an included file'],
  [/^-W[lap],|^-X(linker|assembler|preprocessor)/, 'passes options to another program'],
  [/^-J|^-(cp|classpath)$|^--?class-path|^--?processor|^-processorpath/, "changes what the compiler's JVM loads"],
  [/^-M[DFTQ]|^-save-temps|^-f?dump|^-fprofile|^--?emit|^--?out-dir|^-Z|^-Clink|^-Clinker|^--?extern/, 'writes or reads files the build does not name'],
];

export interface OptionsProblem {
  /** Index of the refused option. */
  index: number;
  message: string;
}

/** Each allowed form as an anchored pattern (a recipe's forms are full-match patterns). */
const compiled = new Map<string, RegExp>();
function anchored(form: string): RegExp {
  let re = compiled.get(form);
  if (!re) {
    re = new RegExp(`^(?:${form})$`);
    compiled.set(form, re);
  }
  return re;
}

/** The forms of compiler options a compiler takes (GET /api/compilers/, the playground); none without a compile stage. */
export function optionForms(recipe: Pick<CompilerRecipe, 'compile' | 'options'>): string[] {
  return recipe.compile ? [...(recipe.options ?? [])] : [];
}

/** A character class's characters: "0-3sg" → 0 1 2 3 s g. */
const chars = (cls: string): string[] =>
  cls.replace(/(.)-(.)/g, (_r, a: string, b: string) => Array.from({ length: b.charCodeAt(0) - a.charCodeAt(0) + 1 }, (_x, i) => String.fromCharCode(a.charCodeAt(0) + i)).join('')).split('');

/** Alternatives of a group as words: "c or gnu", "89, 90 or 99". */
const orList = (parts: string[]) => (parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`);

/**
 * An allowed form as a person reads it rather than as a pattern: "-std=(c|gnu)(89|11)"
 * reads "-std=…, with c or gnu, then 89 or 11"; names and values read NAME and VALUE;
 * optional parts in brackets.
 */
export function formWords(form: string): string {
  const choices: string[] = [];
  let text = form
    .replace(/\\\+/g, '+')
    .replace(/\[A-Za-z_\]\[A-Za-z0-9_\]\*|\[a-z\]\[a-z0-9\+-\]\*/g, 'NAME')
    .replace(/\(=\[\^\\s\]\*\)\?|\(=\[a-z0-9\]\+\)\?/g, '[=VALUE]')
    .replace(/\[([^\]]+)\]\?/g, (_m, cls: string) => `\u0001${orList(chars(cls))}\u0002`)
    .replace(/\(([^()]*)\)\?/g, (_m, g: string) => `\u0001${orList(g.split('|'))}\u0002`);
  text = text
    .replace(/\(([^()]*)\)/g, (_m, g: string) => {
      choices.push(orList(g.split('|')));
      return '…';
    })
    .replace(/\[([^\]]+)\]/g, (m, cls: string) => {
      if (cls === '=VALUE') return m;
      choices.push(orList(chars(cls)));
      return '…';
    })
    // Optional parts, kept apart until now, in brackets.
    .replace(/\u0001/g, '[')
    .replace(/\u0002/g, ']');
  return choices.length === 0 ? text : `${text.replace(/…+/g, '…')} (${choices.join(', then ')})`;
}

/** Every allowed form in words, for a hint or a refusal. */
export const formsInWords = (forms: readonly string[]): string => forms.map(formWords).join('; ');

/** Why `option` is never allowed, whatever the recipe; undefined when it is not one of those. */
export function neverAllowed(option: string): string | undefined {
  return NEVER.find(([re]) => re.test(option))?.[1];
}

/** The first option of `options` that `recipe` (with its id) does not take, with why; undefined when all are taken. */
export function optionsProblem(id: string, recipe: Pick<CompilerRecipe, 'compile' | 'options'>, options: readonly string[]): OptionsProblem | undefined {
  if (options.length === 0) return undefined;
  if (!recipe.compile) return { index: 0, message: `${id} has no compile stage: compiler options do not apply to it` };
  const forms = recipe.options ?? [];
  if (options.length > PROGRAM_LIMITS.compilerOptionsMax) {
    return { index: PROGRAM_LIMITS.compilerOptionsMax, message: `at most ${PROGRAM_LIMITS.compilerOptionsMax} compiler options (got ${options.length})` };
  }
  for (const [index, option] of options.entries()) {
    const shown = JSON.stringify(option.length > 80 ? `${option.slice(0, 80)}…` : option);
    if (new TextEncoder().encode(option).length > PROGRAM_LIMITS.compilerOptionMaxBytes) {
      return { index, message: `${shown} is longer than ${PROGRAM_LIMITS.compilerOptionMaxBytes} bytes` };
    }
    if (option.includes('\u0000')) return { index, message: 'must not contain NUL characters' };
    const never = neverAllowed(option);
    const allowed = forms.length === 0 ? `${id} takes no compiler options` : `${id} allows ${formsInWords(forms)} (each option one element, whole)`;
    if (never) return { index, message: `${shown} is never allowed: it ${never}; ${allowed}` };
    if (!forms.some((f) => anchored(f).test(option))) return { index, message: `${shown} is not allowed; ${allowed}` };
  }
  return undefined;
}

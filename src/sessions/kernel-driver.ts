// The Python program a kernel session's cell runs as (written into the sandbox as
// .kernel/driver.py beside the cell's source, .kernel/cell.py). It restores the
// kernel's state from .kernel/state.pickle, runs the cell as Jupyter does (the last
// expression's value is shown, None shows nothing), saves the state again and writes
// the cell's result to .kernel/result.json, in that order and only once the cell has
// ended: a cell the time limit ends, or one that takes the interpreter down, leaves the
// state from before it. State is kept without replaying cells: imported modules by
// name, functions and classes defined at a cell's top level by their source (run again
// first), every other value pickled on its own; what cannot be kept is named in the
// result. Everything here runs as the caller's own code in the caller's own sandbox, so
// unpickling the state is no risk to anyone else; the runner reads the result as
// untrusted input (src/sessions/kernel.ts).

export const KERNEL_DIR = '.kernel';
export const KERNEL_STATE = `${KERNEL_DIR}/state.pickle`;
export const KERNEL_RESULT = `${KERNEL_DIR}/result.json`;
export const KERNEL_DRIVER = `${KERNEL_DIR}/driver.py`;
export const KERNEL_CELL = `${KERNEL_DIR}/cell.py`;

export const KERNEL_DRIVER_SOURCE = String.raw`
import ast, base64, builtins, importlib, io, json, linecache, os, pickle, sys, traceback, types

STATE = '.kernel/state.pickle'
RESULT = '.kernel/result.json'
CELL = '.kernel/cell.py'
STATE_MAX, VALUE_MAX, IMAGES_MAX, IMAGE_MAX = (int(a) for a in sys.argv[1:5])
REASON_MAX = 500


def short(text, limit=REASON_MAX):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + '...'


def is_def(value):
    return isinstance(value, (types.FunctionType, type)) and getattr(value, '__module__', None) == '__main__'


def restore(ns, not_kept):
    empty = {'modules': {}, 'defs': {}, 'values': {}}
    try:
        with open(STATE, 'rb') as f:
            state = pickle.load(f)
        if not (isinstance(state, dict) and all(isinstance(state.get(k), dict) for k in empty)):
            raise ValueError('not a kernel state')
    except FileNotFoundError:
        return empty
    except Exception as e:
        not_kept.append({'name': STATE, 'reason': short('the saved state could not be read (%s: %s); the kernel started empty' % (type(e).__name__, e))})
        return empty
    for name, module in state['modules'].items():
        try:
            ns[name] = importlib.import_module(module)
        except Exception as e:
            not_kept.append({'name': name, 'reason': short('import %s failed: %s' % (module, e))})
    # Definitions first (values may be their instances); one that needs a value (a default argument) is tried again after them.
    # The values that need such a definition are tried again after it.
    later = {name: source for name, source in state['defs'].items() if attempt(lambda: exec(compile(source, '<cell>', 'exec'), ns))}
    again = {name: blob for name, blob in state['values'].items() if attempt(lambda: ns.__setitem__(name, pickle.loads(blob)))}
    for name, source in later.items():
        e = attempt(lambda: exec(compile(source, '<cell>', 'exec'), ns))
        if e:
            not_kept.append({'name': name, 'reason': short('its definition failed to run again: %s: %s' % (type(e).__name__, e))})
    for name, blob in again.items():
        e = attempt(lambda: ns.__setitem__(name, pickle.loads(blob)))
        if e:
            not_kept.append({'name': name, 'reason': short('could not be unpickled: %s: %s' % (type(e).__name__, e))})
    return state


def attempt(work):
    # The exception work raised, or None.
    try:
        work()
        return None
    except Exception as e:
        return e


def definitions(source, tree):
    # The source of each top-level def and class, decorators included, by name.
    lines = source.splitlines(True)
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found[node.name] = ''.join(lines[start - 1:node.end_lineno])
    return found


def save(ns, state, new_defs, not_kept):
    modules, defs, values = {}, {}, {}
    known = dict(state['defs'])
    for name, source in new_defs.items():
        known.pop(name, None)
        known[name] = source
    for name, value in list(ns.items()):
        if name.startswith('__') or name == '_':
            continue
        if isinstance(value, types.ModuleType):
            modules[name] = value.__name__
        elif name in known and (is_def(value) or callable(value) and getattr(value, '__module__', None) == '__main__'):
            defs[name] = None
        elif is_def(value) and value.__qualname__ not in known:
            # Pickled by reference to a name no kept source defines: it could not be found again.
            not_kept.append({'name': name, 'reason': 'its source is not kept: only functions and classes defined at a cell\'s top level are (not a lambda, nor one defined in a block or a function)'})
        else:
            try:
                values[name] = pickle.dumps(value, protocol=4)
            except Exception as e:
                not_kept.append({'name': name, 'reason': short('not picklable: %s: %s' % (type(e).__name__, e))})
    defs = {name: source for name, source in known.items() if name in defs}
    total = sum(len(b) for b in values.values())
    for name in sorted(values, key=lambda n: -len(values[n])):
        if total <= STATE_MAX:
            break
        total -= len(values[name])
        not_kept.append({'name': name, 'reason': 'too large to keep (%d bytes pickled; the state holds at most %d)' % (len(values[name]), STATE_MAX)})
        del values[name]
    blob = pickle.dumps({'modules': modules, 'defs': defs, 'values': values}, protocol=4)
    with open(STATE + '.tmp', 'wb') as f:
        f.write(blob)
    os.replace(STATE + '.tmp', STATE)


def figures():
    images = []
    plt = sys.modules.get('matplotlib.pyplot')
    if plt is None:
        return images
    try:
        for num in plt.get_fignums()[:IMAGES_MAX]:
            buf = io.BytesIO()
            plt.figure(num).savefig(buf, format='png')
            data = buf.getvalue()
            if len(data) <= IMAGE_MAX:
                images.append({'name': 'figure-%d.png' % num, 'content_base64': base64.b64encode(data).decode('ascii')})
        plt.close('all')
    except Exception as e:
        print('the figures could not be saved: %s: %s' % (type(e).__name__, e), file=sys.stderr)
    return images


def main():
    sys.path[0] = '/box'
    os.environ.setdefault('MPLBACKEND', 'Agg')
    # The cell's namespace is __main__ (as in a notebook), so what it defines pickles by reference to it.
    kernel = types.ModuleType('__main__')
    ns = kernel.__dict__
    ns['__builtins__'] = builtins
    sys.modules['__main__'] = kernel
    try:
        os.remove(RESULT)
    except FileNotFoundError:
        pass
    not_kept = []
    state = restore(ns, not_kept)
    with open(CELL, encoding='utf-8') as f:
        source = f.read()
    linecache.cache['<cell>'] = (len(source), None, source.splitlines(True), '<cell>')
    value, error, new_defs = None, None, {}
    try:
        tree = ast.parse(source, '<cell>', 'exec')
    except SyntaxError as e:
        traceback.print_exception(type(e), e, None)
        error = {'name': type(e).__name__, 'message': short(e, 4096)}
        tree = None
    if tree is not None:
        new_defs = definitions(source, tree)
        last = ast.Expression(tree.body.pop().value) if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        try:
            exec(compile(tree, '<cell>', 'exec'), ns)
            if last is not None:
                shown = eval(compile(last, '<cell>', 'eval'), ns)
                if shown is not None:
                    ns['_'] = shown
                    value = short(repr(shown), VALUE_MAX)
        except BaseException as e:
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
            error = {'name': type(e).__name__, 'message': short(e, 4096)}
    images = figures()
    sys.stdout.flush()
    sys.stderr.flush()
    save(ns, state, new_defs, not_kept)
    result = {'value': value, 'images': images, 'error': error, 'not_kept': not_kept}
    with open(RESULT + '.tmp', 'w', encoding='utf-8') as f:
        json.dump(result, f)
    os.replace(RESULT + '.tmp', RESULT)
    sys.stdout.flush()
    sys.stderr.flush()
    # Threads the cell started do not outlive it (nor hold the run open).
    os._exit(1 if error else 0)


main()
`;

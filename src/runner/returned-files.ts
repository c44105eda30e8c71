import mime from 'mime-types';
import { RETURN_FILES_LIMITS } from '../limits.js';
import { OUT_DIR } from '../program/paths.js';
import type { ReturnedFiles } from '../result.js';
import type { SandboxOutcome } from '../sandbox/spec.js';

// The files a run wrote under /box/out/, as its result carries them (return_files):
// runbox-init sent them in name order while within RETURN_FILES_LIMITS and listed the
// rest (native/archive.h), and listed any whose name is not UTF-8 (escaped, `\xff`:
// JSON cannot carry it); names lose their out/ prefix. A media type from the name
// lets a page show an image as one (an SVG as an image, never as markup).

const PREFIX = `${OUT_DIR}/`;

export function returnedFiles(outcome: Pick<SandboxOutcome, 'collected' | 'omitted' | 'collectLost'>): ReturnedFiles {
  const below = <T extends { name: string }>(list: T[]) => list.filter((f) => f.name.startsWith(PREFIX));
  const files = below(outcome.collected).map((f) => {
    const name = f.name.slice(PREFIX.length);
    return { name, size: f.content.length, mime: mime.lookup(name) || 'application/octet-stream', content: f.content.toString('base64') };
  });
  const dropped = below(outcome.omitted).map((f) => ({ name: f.name.slice(PREFIX.length), size: f.size, reason: f.reason }));
  // Files lost with a spoilt stage stream cannot be listed; they are still missing.
  return { files, files_truncated: dropped.length > 0 || outcome.collectLost !== undefined, files_dropped: dropped.slice(0, RETURN_FILES_LIMITS.droppedListedMax) };
}

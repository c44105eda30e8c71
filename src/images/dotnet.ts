import { execa } from 'execa';
import { mkdir, readdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

// Debian ships no .NET SDK: images with `dotnetSdk: true` get the build host's SDK
// copied in, plus fixed paths the recipes can name whatever the SDK version is:
//
//   /usr/bin/dotnet                               the host (muxer)
//   /usr/share/dotnet/sdk/current                 -> sdk/<version>
//   /usr/share/dotnet/runbox/csc.rsp, fsc.rsp, vbc.rsp   compiler options + every reference assembly
//   /usr/share/dotnet/runbox/app.runtimeconfig.json   for `dotnet exec --runtimeconfig`
//   /usr/share/dotnet/runbox/fsharp.deps.json + probe/  where F# programs find FSharp.Core
//
// (fsc --standalone cannot link FSharp.Core statically against the reference pack, so
// the run stage names FSharp.Core through a deps file and a probing path instead.)
//
// Compiling with csc.dll / fsc.dll directly skips MSBuild and NuGet (no network in the
// sandbox, and a project build is seconds slower).

const IN_IMAGE = '/usr/share/dotnet';

function newest(names: string[]): string | undefined {
  const versions = names.filter((n) => /^\d+\.\d+\.\d+/.test(n));
  const key = (v: string) => v.split(/[.-]/).map((p) => (/^\d+$/.test(p) ? p.padStart(8, '0') : p)).join('.');
  return versions.sort((a, b) => (key(a) < key(b) ? -1 : 1)).pop();
}

export async function hostDotnetRoot(): Promise<string> {
  const { stdout } = await execa('sh', ['-c', 'command -v dotnet'], { reject: false });
  if (!stdout.trim()) throw new Error('this recipe needs the .NET SDK on the build host (dotnet not found on PATH)');
  return dirname(await realpath(stdout.trim()));
}

export async function installDotnetSdk(rootfs: string, log: (line: string) => void): Promise<void> {
  const host = await hostDotnetRoot();
  const sdk = newest(await readdir(join(host, 'sdk')));
  const runtime = newest(await readdir(join(host, 'shared', 'Microsoft.NETCore.App')));
  const refPack = join(host, 'packs', 'Microsoft.NETCore.App.Ref');
  const refVersion = newest(await readdir(refPack));
  if (!sdk || !runtime || !refVersion) throw new Error(`incomplete .NET SDK at ${host} (sdk, runtime or reference pack missing)`);
  const tfm = (await readdir(join(refPack, refVersion, 'ref'))).find((n) => /^net\d+\.\d+$/.test(n));
  if (!tfm) throw new Error(`no target framework in ${join(refPack, refVersion, 'ref')}`);
  log(`copying the host's .NET SDK ${sdk} (runtime ${runtime}) from ${host}`);

  const target = join(rootfs, IN_IMAGE.slice(1));
  await mkdir(target, { recursive: true });
  await execa('cp', ['-a', '--', `${host}/.`, target]);
  await symlink(`${IN_IMAGE}/dotnet`, join(rootfs, 'usr/bin/dotnet')).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await symlink(sdk, join(target, 'sdk', 'current'));

  const refDir = `${IN_IMAGE}/packs/Microsoft.NETCore.App.Ref/${refVersion}/ref/${tfm}`;
  const refs = (await readdir(join(rootfs, refDir.slice(1)))).filter((n) => n.endsWith('.dll')).sort();
  const fsharpCore = `${IN_IMAGE}/sdk/${sdk}/FSharp/FSharp.Core.dll`;
  const out = join(target, 'runbox');
  await mkdir(out, { recursive: true });
  await writeFile(
    join(out, 'csc.rsp'),
    ['-nologo', '-nostdlib+', '-target:exe', '-optimize+', '-langversion:9.0', ...refs.map((r) => `-r:${refDir}/${r}`), ''].join('\n'),
  );
  await writeFile(
    join(out, 'fsc.rsp'),
    ['--nologo', '--noframework', '--target:exe', '--optimize+', `-r:${fsharpCore}`, ...refs.map((r) => `-r:${refDir}/${r}`), ''].join('\n'),
  );
  // What the SDK's MSBuild targets pass to vbc for a .NET (Core) project: the VB runtime
  // is Microsoft.VisualBasic.Core, the `My` namespace is left empty (it needs Windows
  // Forms types), and the project's default imports and options.
  await writeFile(
    join(out, 'vbc.rsp'),
    [
      '-nologo',
      '-nostdlib',
      `-sdkpath:${refDir}`,
      `-vbruntime:${refDir}/Microsoft.VisualBasic.Core.dll`,
      '-target:exe',
      '-optimize+',
      '-define:_MYTYPE="Empty"',
      '-imports:Microsoft.VisualBasic,System,System.Collections,System.Collections.Generic,System.Diagnostics,System.Linq,System.Threading.Tasks',
      '-optionexplicit+',
      '-optionstrict-',
      '-optioninfer+',
      '-optioncompare:binary',
      ...refs.map((r) => `-r:${refDir}/${r}`),
      '',
    ].join('\n'),
  );
  const probeLib = join(out, 'probe', 'fsharp.core', 'lib');
  await mkdir(probeLib, { recursive: true });
  await symlink(fsharpCore, join(probeLib, 'FSharp.Core.dll'));
  const targetName = `.NETCoreApp,Version=v${tfm.slice(3)}`;
  const deps = {
    runtimeTarget: { name: targetName },
    targets: { [targetName]: { 'FSharp.Core/0.0.0': { runtime: { 'lib/FSharp.Core.dll': {} } } } },
    libraries: { 'FSharp.Core/0.0.0': { type: 'package', serviceable: false, sha512: '', path: 'fsharp.core' } },
  };
  await writeFile(join(out, 'fsharp.deps.json'), JSON.stringify(deps, null, 2) + '\n');
  const framework = { name: 'Microsoft.NETCore.App', version: runtime };
  await writeFile(join(out, 'app.runtimeconfig.json'), JSON.stringify({ runtimeOptions: { tfm, framework } }, null, 2) + '\n');
}

import { ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Elixir on the beam image: ERL_FLAGS gives the VM 2 schedulers, 2 dirty CPU and
// 2 dirty I/O schedulers, whatever the host's cores.

describeCompiler('elixir-1.14', [
  ...recipePrograms('elixir-1.14'),
  { name: 'echoes standard input', code: 'IO.write(IO.read(:stdio, :eof))\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an uncaught exception is runtime_error 1 with the message', code: 'raise ArgumentError, "broken"\n', check: runtimeError(1, '(ArgumentError) broken') },
  {
    // The VM's default would be one scheduler per host core and 10 dirty I/O schedulers.
    name: 'tasks run concurrently on 2 schedulers, 2 dirty CPU and 2 dirty I/O schedulers (ERL_FLAGS)',
    code: '1..1000 |> Task.async_stream(fn n -> rem(n, 7) end) |> Enum.reduce(0, fn {:ok, r}, acc -> acc + r end) |> IO.inspect()\nIO.inspect(Enum.map([:schedulers_online, :dirty_cpu_schedulers, :dirty_io_schedulers], &:erlang.system_info/1))\n',
    check: succeeds('3003\n[2, 2, 2]\n'),
  },
]);

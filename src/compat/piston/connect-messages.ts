import Type from 'typebox';
import { PistonExecuteRequest } from './request.js';

// The messages of Piston's interactive WebSocket (/piston/api/v2/connect), as Piston
// documents them; published in the OpenAPI document (x-websocket-messages).

const Init = Type.Object(
  { type: Type.Literal('init'), ...PistonExecuteRequest.properties },
  { description: "Starts the run: the execute request's fields. Sent once, within a second of connecting. Its stdin is written first." },
);
const StdinData = Type.Object(
  { type: Type.Literal('data'), stream: Type.Literal('stdin'), data: Type.String() },
  { description: "Written to the program's stdin (a pipe) as it is. Stdin in all, the init's included, is at most the input limit." },
);
const Signal = Type.Object(
  { type: Type.Literal('signal'), signal: Type.String({ description: 'A signal name such as SIGKILL or SIGINT.' }) },
  { description: 'Stops the program (whatever the signal named; an unknown name closes the connection with 4005).' },
);
export const PistonConnectClientMessage = Type.Union([Init, StdinData, Signal]);

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
export const PistonConnectServerMessage = Type.Union([
  Type.Object({ type: Type.Literal('runtime'), language: Type.String(), version: Type.String() }),
  Type.Object({ type: Type.Literal('stage'), stage: Type.Enum(['compile', 'run']) }),
  Type.Object({ type: Type.Literal('data'), stream: Type.Enum(['stdout', 'stderr']), data: Type.String() }),
  Type.Object(
    { type: Type.Literal('exit'), stage: Type.Enum(['compile', 'run']), code: Nullable(Type.Integer()), signal: Nullable(Type.String()) },
    { description: 'The end of a stage; after the last, the connection is closed with 4999 (Job Completed).' },
  ),
  Type.Object({ type: Type.Literal('error'), message: Type.String() }, { description: 'Usually followed by a close with 4002 (Notified Error).' }),
]);

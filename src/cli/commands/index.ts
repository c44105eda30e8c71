import type { Command } from '../command.js';
import { accountCommands } from './accounts.js';
import { adminKeyCommands } from './admin-keys.js';
import { callbackCommands } from './callbacks.js';
import { emailCommands } from './emails.js';
import { imageCommands } from './images.js';
import { mcpCommands } from './mcp.js';
import { queueCommands } from './queue.js';
import { submissionCommands } from './submissions.js';
import { systemCommands } from './system.js';

// Every admin command group, in the order --help lists them.
export const commandGroups: Command[][] = [systemCommands, imageCommands, accountCommands, queueCommands, submissionCommands, callbackCommands, emailCommands, adminKeyCommands, mcpCommands];

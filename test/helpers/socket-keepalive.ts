// TCP keepalive as the kernel holds it for one of this process's sockets, for tests that must
// show a configured keepalive reaches the socket (node can set the options but not read them).
// The socket is found by its local port (/proc/net/tcp gives its inode, /proc/self/fd the
// descriptor); a perl child copies the descriptor out of this process (pidfd_open, pidfd_getfd:
// Linux 5.6 and later, allowed for root or the process's own user) and asks getsockopt for
// SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL and TCP_KEEPCNT.
import { execFile, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { promisify } from 'node:util';
import { skipWithoutTool } from './missing-tool.ts';

export interface SocketKeepalive {
  enabled: boolean;
  idleSeconds: number;
  intervalSeconds: number;
  probes: number;
}

// 434 and 438 are pidfd_open and pidfd_getfd on every architecture (the common syscall table).
const READ_OPTIONS = `
use strict;
use Socket qw(SOL_SOCKET SO_KEEPALIVE IPPROTO_TCP TCP_KEEPIDLE TCP_KEEPINTVL TCP_KEEPCNT);
my ($pid, $fd) = map { $_ + 0 } @ARGV;
my $pidfd = syscall(434, $pid, 0);
die "pidfd_open: $!\\n" if $pidfd < 0;
my $copy = syscall(438, $pidfd, $fd, 0);
die "pidfd_getfd: $!\\n" if $copy < 0;
open(my $socket, '+<&=', $copy) or die "fdopen: $!\\n";
my @options = ([SOL_SOCKET, SO_KEEPALIVE], [IPPROTO_TCP, TCP_KEEPIDLE], [IPPROTO_TCP, TCP_KEEPINTVL], [IPPROTO_TCP, TCP_KEEPCNT]);
print join(' ', map { unpack('i', getsockopt($socket, $_->[0], $_->[1]) // die "getsockopt: $!\\n") } @options), "\\n";
`;

// Checked once as the test file loads: a missing perl is said loudly (and fails in CI, which
// installs it), a system other than Linux only skips.
const readbackUnavailable =
  process.platform !== 'linux'
    ? 'reading socket options back needs Linux (pidfd_getfd)'
    : skipWithoutTool(
        'perl',
        spawnSync('perl', ['-MSocket', '-e', '1']).status === 0
          ? undefined
          : 'reading socket options back needs perl with its Socket module; apt-get install perl',
      ) || undefined;

/** Why the options cannot be read here (a test skips with it), or undefined when they can. */
export function keepaliveReadbackUnavailable(): string | undefined {
  return readbackUnavailable;
}

/**
 * The keepalive options of this process's established TCP socket from local port `localPort`
 * (to `remotePort`, when several share the local port: a listener's accepted connections).
 */
export async function socketKeepalive(localPort: number, remotePort?: number): Promise<SocketKeepalive> {
  const fd = descriptorOf(localPort, remotePort);
  const { stdout } = await promisify(execFile)('perl', ['-e', READ_OPTIONS, String(process.pid), String(fd)]);
  const [enabled, idleSeconds, intervalSeconds, probes] = stdout.trim().split(' ').map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return { enabled: enabled !== 0, idleSeconds, intervalSeconds, probes };
}

/** Inodes of the established sockets (IPv4 or IPv6) with this local (and remote) port. */
function socketInodes(localPort: number, remotePort: number | undefined): Set<string> {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address and rem_address are ADDRESS:PORT in hex; state 01 is ESTABLISHED; the inode is field 9.
      if (!fields[1]?.endsWith(hex(localPort)) || fields[3] !== '01' || !fields[9]) continue;
      if (remotePort === undefined || fields[2]?.endsWith(hex(remotePort))) inodes.add(fields[9]);
    }
  }
  return inodes;
}

function descriptorOf(localPort: number, remotePort: number | undefined): number {
  const inodes = socketInodes(localPort, remotePort);
  for (const entry of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${entry}`);
    } catch {
      continue; // closed meanwhile
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined && inodes.has(inode)) return Number(entry);
  }
  const peer = remotePort === undefined ? '' : ` and remote port ${remotePort}`;
  throw new Error(`no established socket of this process has local port ${localPort}${peer}`);
}

// Memory and CPU of a process and everything it started (a gateway may run several workers),
// read from /proc (Linux).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The pids of every process below `pid` (children, their children, ...). */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const child of childrenOf(parent)) {
      if (!found.includes(child) && child !== pid) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** `pid` and its descendants. */
export function processTree(pid: number): number[] {
  return [pid, ...descendants(pid)];
}

function childrenOf(pid: number): number[] {
  // Each thread lists the children it forked; a process's children are the union over its threads.
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const tid of threads) {
    const text = readOrEmpty(`/proc/${pid}/task/${tid}/children`);
    for (const word of text.split(' ')) {
      if (word !== '') children.push(Number(word));
    }
  }
  return children;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** A field of /proc/<pid>/status in bytes (VmHWM), 0 when the process is gone. */
function statusBytes(pid: number, field: 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readOrEmpty(`/proc/${pid}/status`));
  return match ? Number(match[1]) * 1024 : 0;
}

/** The summed peak resident set (VmHWM) of the processes: each one's own peak, added up. */
export function peakRssBytes(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + statusBytes(pid, 'VmHWM'), 0);
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100; // the value on every Linux architecture Node runs on
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time of the processes so far, in milliseconds. */
export function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const stat = readOrEmpty(`/proc/${pid}/stat`);
    // The command name (field 2) may contain spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5), utime and stime, are the 12th and 13th after the name.
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }
  return (ticks * 1000) / clockTicks();
}

/** The whole machine's CPU time so far (all cores), in ticks per kind: user nice system idle iowait irq softirq steal ... */
function machineTicks(): number[] {
  const first = readOrEmpty('/proc/stat').split('\n')[0] ?? '';
  return first.trim().split(/\s+/).slice(1).map(Number);
}

/** CPU time of the whole machine spent outside idle and iowait so far (all cores), in milliseconds. */
export function machineBusyMs(): number {
  const [user, nice, system, , , irq, softirq, steal] = machineTicks();
  const ticks = [user, nice, system, irq, softirq, steal].reduce<number>((sum, value) => sum + (value ?? 0), 0);
  return (ticks * 1000) / clockTicks();
}

/**
 * Interrupt and softirq time of the whole machine so far (all cores), in milliseconds: the
 * loopback network's receive work is largely counted here.
 */
export function machineInterruptMs(): number {
  const [, , , , , irq, softirq] = machineTicks();
  return (((irq ?? 0) + (softirq ?? 0)) * 1000) / clockTicks();
}

/**
 * CPU time of this process and of every child it has waited for (their own waited-for children
 * included), in milliseconds: once all children have ended, everything the benchmark ran.
 */
export function ownCpuMs(): number {
  const stat = readOrEmpty('/proc/self/stat');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: fields 14 to 17 of stat(5).
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index] ?? 0), 0);
  return (ticks * 1000) / clockTicks();
}

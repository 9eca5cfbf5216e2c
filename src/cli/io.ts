// The command line's input and output, as commands use them (tests pass their own).
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => string;
}

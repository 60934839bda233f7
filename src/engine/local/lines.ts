/** The longest line kept whole; a longer one (a minified bundle printed by mistake) is cut into pieces. */
export const MAX_LINE_LENGTH = 16 * 1024;

/**
 * Turns a byte stream into lines. A partial line waits for its end; `flush` hands out what is left when the stream
 * ends. Decoding is done on whole lines, so a multi-byte character split between two chunks is not mangled.
 */
export class LineSplitter {
  private pending: Buffer = Buffer.alloc(0);

  private readonly onLine: (line: string) => void;
  constructor(onLine: (line: string) => void) {
    this.onLine = onLine;
  }

  push(chunk: Buffer): void {
    let data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let newline = data.indexOf(0x0a);
    while (newline !== -1) {
      this.emit(data.subarray(0, newline));
      data = data.subarray(newline + 1);
      newline = data.indexOf(0x0a);
    }
    while (data.length > MAX_LINE_LENGTH) {
      this.emit(data.subarray(0, MAX_LINE_LENGTH));
      data = data.subarray(MAX_LINE_LENGTH);
    }
    this.pending = Buffer.from(data);
  }

  flush(): void {
    if (this.pending.length > 0) this.emit(this.pending);
    this.pending = Buffer.alloc(0);
  }

  private emit(bytes: Buffer): void {
    const text = bytes.toString('utf8');
    this.onLine(text.endsWith('\r') ? text.slice(0, -1) : text);
  }
}

/** Keeps the last `size` lines, for error messages that show how a command ended. */
export class LineTail {
  private readonly lines: string[] = [];

  private readonly size: number;
  constructor(size: number) {
    this.size = size;
  }

  add(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.size) this.lines.shift();
  }

  text(): string {
    return this.lines.join('\n');
  }
}

/** A one-line progress bar on a terminal; a line per quarter otherwise (CI logs). */
export class Progress {
  private lastQuarter = -1;
  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {}

  update(done: number): void {
    const ratio = this.total === 0 ? 1 : Math.min(1, done / this.total);
    if (this.out.isTTY) {
      const width = 30;
      const filled = Math.round(ratio * width);
      this.out.write(
        `\r  [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.total} ${this.label}`,
      );
      return;
    }
    const quarter = Math.floor(ratio * 4);
    if (quarter > this.lastQuarter) {
      this.lastQuarter = quarter;
      this.out.write(`  ${done}/${this.total} ${this.label}\n`);
    }
  }

  finish(): void {
    if (this.out.isTTY) this.out.write('\n');
  }
}

/**
 * Where the editor's top-level nodes sit in the document: node k shows `counts[k]` lines, from line
 * `starts[k]`. With the lines themselves this maps a DOM point to an index in the `Y.Text` and back (points.ts
 * inside one block). Invariant kept by the binding: after every local write and every patch, `nodes` are the
 * root's content nodes in order and `counts` sum to the number of lines of the document.
 */
import { lineStarts, type Line } from 'wave-richtext';
import type { HtmlDialect } from 'wave-richtext';
import { offsetInBlock, pointInBlock, type DomPoint } from './points.js';
import { isElement, topOf } from './dom.js';

export class LineIndex {
  /** Text index of each node's first line, plus the text's length as a last entry. */
  private readonly charStarts: number[];

  constructor(
    readonly root: Node,
    readonly nodes: readonly Node[],
    readonly counts: readonly number[],
    readonly lines: readonly Line[],
    private readonly dialect: HtmlDialect,
  ) {
    const starts = lineStarts(lines);
    this.charStarts = [0];
    let line = 0;
    for (const n of counts) {
      line += n;
      this.charStarts.push(starts[Math.min(line, lines.length)]!);
    }
  }

  /** The lines node `k` shows. */
  linesOf(k: number): Line[] {
    const first = this.counts.slice(0, k).reduce((a, b) => a + b, 0);
    return this.lines.slice(first, first + this.counts[k]!);
  }

  /** The text index of a DOM point in the root; null when it is outside the content. */
  indexOf(container: Node, offset: number): number | null {
    if (container === this.root) {
      // Between top-level nodes: the start of the next content node, or the end.
      for (let i = offset; i < container.childNodes.length; i++) {
        const k = this.nodes.indexOf(container.childNodes[i]!);
        if (k >= 0) return this.charStarts[k]!;
      }
      return this.end();
    }
    const top = topOf(this.root, container);
    if (!top) return null;
    const k = this.nodes.indexOf(top);
    if (k < 0) {
      // Inside editor UI or whitespace between blocks: the next block's start.
      for (let n = top.nextSibling; n; n = n.nextSibling) {
        const j = this.nodes.indexOf(n);
        if (j >= 0) return this.charStarts[j]!;
      }
      return this.end();
    }
    const lines = this.linesOf(k);
    if (lines.length === 0) return this.charStarts[k]!;
    return this.charStarts[k]! + offsetInBlock(top, container, offset, this.dialect, lines);
  }

  /** The DOM point of text index `index` (clamped to the content). */
  pointOf(index: number): DomPoint | null {
    if (this.nodes.length === 0) return null;
    let k = 0;
    while (k < this.nodes.length - 1 && (this.counts[k] === 0 || this.charStarts[k + 1]! <= index)) k++;
    const top = this.nodes[k]!;
    const lines = this.linesOf(k);
    if (lines.length === 0) return { node: isElement(top) ? top : top.parentNode!, offset: 0 };
    const within = Math.max(0, Math.min(index - this.charStarts[k]!, this.charStarts[k + 1]! - this.charStarts[k]! - 1));
    return pointInBlock(top, within, this.dialect, lines);
  }

  private end(): number {
    return Math.max(0, this.charStarts[this.charStarts.length - 1]! - 1);
  }
}

/**
 * `index` moved through a `Y.Text` change (its event's delta). Text inserted exactly at `index` goes after it: a
 * caret stays with the character before it, so two users typing at one place each keep typing after their own
 * characters instead of interleaving.
 */
export function transformIndex(index: number, delta: ReadonlyArray<{ insert?: unknown; delete?: number; retain?: number }>): number {
  let pos = 0;
  let out = index;
  for (const op of delta) {
    if (pos >= index) break;
    if (op.retain !== undefined) pos += op.retain;
    else if (op.delete !== undefined) {
      out -= Math.min(op.delete, index - pos);
      pos += op.delete;
    } else if (op.insert !== undefined) out += typeof op.insert === 'string' ? op.insert.length : 1;
  }
  return out;
}

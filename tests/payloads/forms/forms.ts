// A line comment.
import { helper } from "./helper";

/**
 * A doc comment.
 */
export function declared(a: number): number {
  return helper(a); // trailing comment keeps the line code
}

export function overloaded(a: string): string;
export function overloaded(a: number): number;
export function overloaded(a: any): any {
  return a;
}

export const arrow = (b: number): number => {
  return b * 2;
};

const expression = (c: number) => c + 1;

export class Widget<T> {
  constructor(private readonly size: number) {
    this.check();
  }

  @logged
  area(
    scale: number,
  ): number {
    return this.size * scale;
  }

  optional?(): void;

  private check(): void {
    const text = `
// not a comment: a template string
`;
  }
}

export abstract class Base {
  abstract declaredOnly(): void;
}

interface Shape {
  perimeter(): number;
}

export const handlers = {
  onClick(event: Event): void {
    console.log(event);
  },
  onKey: function (event: Event): void {
    console.log(event);
  },
};

function* generator(): Generator<number> {
  yield 1;
}
/* A block comment
   over two lines. */

export class Tally {
  get total(): number {
    return 0;
  }

  #reset(): void {
    this.count = 0;
  }
}

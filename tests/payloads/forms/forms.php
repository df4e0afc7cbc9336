<?php
// A line comment.
# A hash comment.

/**
 * A doc comment.
 */
function free_function($a)
{
    return $a; // trailing comment keeps the line code
}

class Widget
{
    public function __construct(private int $size)
    {
        $this->check();
    }

    #[Pure]
    public static function build(
        int $size,
        int $scale
    ): self {
        return new self($size * $scale);
    }

    abstract protected function declared(): int;

    public function text(): string
    {
        return <<<TEXT
        // not a comment: a heredoc
        TEXT;
    }
}

interface Shape
{
    public function area(): float;
}

trait Greets
{
    public function greet(): string
    {
        return "hello";
    }
}

$closure = function ($x) {
    return $x * 2;
};

$arrow = fn($x) => $x * 2;

$anonymous = new class {
    public function run(): void
    {
        echo "run";
    }
};
/* A block comment
   over two lines. */

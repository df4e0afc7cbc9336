// A line comment.
package forms

/**
 * A KDoc comment.
 */
class Widget(val size: Int) {
    constructor(width: Int, height: Int) : this(width * height) {
        check() // trailing comment keeps the line code
    }

    fun area(
        scale: Int,
    ): Int {
        return size * scale
    }

    fun expression() = size * 2

    @Suppress("unused")
    private fun check() {
        require(size >= 0)
    }

    companion object {
        fun create(): Widget {
            return Widget(1)
        }
    }
}

fun String.shout(): String {
    return uppercase() + "!"
}

interface Shape {
    fun perimeter(): Double

    fun describe(): String {
        return "shape"
    }
}

val doubler = { x: Int ->
    x * 2
}

fun outer(): Int {
    fun inner(x: Int): Int {
        return x + 1
    }
    val text = """
// not a comment: a raw string
"""
    return inner(text.length)
}

val listener = object : Runnable {
    override fun run() {
        println("run")
    }
}
/* A block comment
   over two lines. */

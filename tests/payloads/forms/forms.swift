// A line comment.
import Foundation

/// A doc comment.
class Widget {
    var size: Int

    init(size: Int) {
        self.size = size // trailing comment keeps the line code
    }

    deinit {
        print("gone")
    }

    @discardableResult
    func area(
        scale: Int
    ) -> Int {
        return size * scale
    }

    var doubled: Int {
        return size * 2
    }
}

extension Widget {
    func describe() -> String {
        return "widget"
    }
}

protocol Shape {
    func perimeter() -> Double
}

extension Shape {
    func summary() -> String {
        return "shape"
    }
}

let doubler = { (x: Int) -> Int in
    return x * 2
}

func outer() -> Int {
    func inner(_ x: Int) -> Int {
        return x + 1
    }
    let text = """
    // not a comment: a multi-line string
    """
    return inner(text.count)
}
/* A block comment
   over two lines. */

package forms;

/**
 * A Javadoc comment.
 */
public class Forms {
    private int n;

    // A constructor.
    public Forms(int n) {
        this.n = n; // trailing comment keeps the line code
    }

    @Override
    public String toString() {
        return "Forms";
    }

    static <T> T generic(
            T value,
            int times)
    {
        return value;
    }

    abstract static class Base {
        abstract int declared();
    }

    interface Shape {
        double area();

        default String describe() {
            return "shape";
        }
    }

    Runnable anonymous() {
        return new Runnable() {
            @Override
            public void run() {
                System.out.println("run");
            }
        };
    }

    java.util.function.IntUnaryOperator doubler = (int x) -> {
        return x * 2;
    };

    void locals() {
        java.util.function.IntUnaryOperator twice = x -> {
            return x * 2;
        };
        String block = """
            // not a comment: a text block
            """;
    }

    record Point(int x, int y) {
        Point {
            if (x < 0) throw new IllegalArgumentException();
        }
    }

    /* A block comment
       over two lines. */
}

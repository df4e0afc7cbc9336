// A line comment.
using System;

namespace Forms
{
    /// <summary>A doc comment.</summary>
    public class Widget
    {
        private int size;

        public Widget(int size)
        {
            this.size = size; // trailing comment keeps the line code
        }

        ~Widget()
        {
            size = 0;
        }

        [Obsolete]
        public int Area(
            int width,
            int height)
        {
            return width * height;
        }

        public static Widget operator +(Widget a, Widget b)
        {
            return new Widget(a.size + b.size);
        }

        public int Size
        {
            get { return size; }
        }

        public void Locals()
        {
            int Local(int x)
            {
                return x * 2;
            }
            Func<int, int> doubler = x =>
            {
                return x * 2;
            };
            var text = @"
// not a comment: a verbatim string
";
        }

        public abstract class Base
        {
            public abstract int Declared();
        }

        public int Expression() => size;
    }

    public interface IShape
    {
        double Perimeter();

        string Describe()
        {
            return "shape";
        }
    }
    /* A block comment
       over two lines. */
}

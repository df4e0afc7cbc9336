# A line comment.
module Forms
  class Widget
    def initialize(size)
      @size = size # trailing comment keeps the line code
    end

    def self.build(
      size,
      scale
    )
      new(size * scale)
    end

    def area = @size * @size

    def one_line; @size; end

    class << self
      def registry
        @registry ||= {}
      end
    end

    DOUBLER = lambda do |x|
      x * 2
    end

    tripler = ->(x) do
      x * 3
    end

    def text
      <<~TEXT
        # not a comment: a heredoc
      TEXT
    end
  end
end

=begin
A block comment
over two lines.
=end

// A line comment.
#include <string>

namespace forms {

/// A doc comment.
class Widget {
public:
    Widget(int size) : size_(size) {
        check();
    }
    ~Widget() {
        size_ = 0;
    }
    int size() const {
        return size_;
    }
    bool operator==(const Widget& other) const {
        return size_ == other.size_;
    }
    void check();
    Widget(const Widget&) = default;
private:
    int size_;
};

void Widget::check()
{
    if (size_ < 0) size_ = 0;
}

template <typename T>
T twice(T value) {
    return value + value;
}

auto lambda = [](int x) {
    return x * 2;
};

std::string raw() {
    return R"(
// not a comment: a raw string
)";
}

}  // namespace forms

// Macros the grammar cannot expand: recall/macros.py blanks them before parsing.
WIDGET_NAMESPACE_BEGIN

class WIDGET_EXPORT Exported {
public:
    WIDGET_WARN_UNUSED_RESULT
    static Exported meta()
    {
        Exported result;
        WIDGET_TRY
        {
            result.check();
        }
        WIDGET_CATCH (...)
        {
            return result;
        }
        return result;
    }

    Exported& update(const Exported& other)
    {
        m_value.object->operator[](other.key()) = other.value();
        return *this;
    }

    static WIDGET_INLINE int inlined(int x) WIDGET_NOEXCEPT
    {
        return x;
    }
};

WIDGET_NAMESPACE_END

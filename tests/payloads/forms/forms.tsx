// A line comment.
import React from "react";

/** A doc comment. */
export function Greeting(props: { name: string }) {
  return <div>Hello {props.name}</div>;
}

export const Button = ({ label }: { label: string }) => {
  const text = "// not a comment: a string";
  return <button>{text}{label}</button>;
};

export class Panel extends React.Component {
  render() {
    return (
      <section>
        {/* a JSX comment */}
        <p>panel</p>
      </section>
    );
  }
}

// The TypeScript compiler's own view of a file's named function definitions, for the count
// check in test_recall_extract.py: an independent parser (Microsoft's, not tree-sitter).
//
// usage: node typescript_functions.js TYPESCRIPT_MODULE_DIR FILE...
// prints one JSON object per file: {"file": ..., "functions": [[name, open, close], ...]}
// where open and close are the 1-based lines of the body's braces. A definition is a
// function, method, constructor or accessor with a block body, or a function or arrow
// function with a block body bound to a name (variable, property, class field, assignment).
"use strict";

const fs = require("fs");
const ts = require(process.argv[2]);

function nameOf(name) {
  if (!name) return null;
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) {
    return name.text;
  }
  if (ts.isPrivateIdentifier(name)) return name.text; // "#secret"
  return null; // a computed name: [Symbol.iterator]
}

function boundName(node) {
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)
      || ts.isPropertyDeclaration(parent)) {
    return parent.initializer === node ? nameOf(parent.name) : null;
  }
  if (ts.isBinaryExpression(parent) && parent.right === node
      && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    const left = parent.left;
    if (ts.isIdentifier(left)) return left.text;
    if (ts.isPropertyAccessExpression(left)) return nameOf(left.name);
  }
  return null;
}

function definitionName(node) {
  if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)
      || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) {
    return nameOf(node.name);
  }
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (ts.isFunctionExpression(node) || ts.isArrowFunction(node)) return boundName(node);
  return null;
}

for (const file of process.argv.slice(3)) {
  const text = fs.readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const functions = [];
  const visit = (node) => {
    const body = node.body;
    if (body && ts.isBlock(body)) {
      const name = definitionName(node);
      if (name !== null) {
        const line = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
        functions.push([name, line(body.getStart(source)), line(body.getEnd())]);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const errors = source.parseDiagnostics.length;
  console.log(JSON.stringify({ file, functions, parse_errors: errors }));
}

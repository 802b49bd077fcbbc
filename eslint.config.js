// ESLint for the browser code (bin/test runs it; the version is pinned in package.json).
import js from "@eslint/js";
import globals from "globals";

export default [
  {
    files: ["frontend/static/frontend/js/**/*.js"],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      globals: globals.browser,
    },
    rules: {
      ...js.configs.recommended.rules,
      "no-unused-vars": "error",
      // `let x = null;` before a try/catch that sets x on both paths: a redundant but clear initialiser.
      "no-useless-assignment": "off",
    },
  },
];

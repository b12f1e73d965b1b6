# Turns the opening book's text (IN) into a C++ source (OUT) defining kConnect4BookText, so that
# every binary carries the book without looking for a file at run time.
file(READ "${IN}" text)
file(WRITE "${OUT}"
  "// Generated from ${IN} by embed_book.cmake.\n"
  "extern const char kConnect4BookText[];\n"
  "const char kConnect4BookText[] = R\"book(${text})book\";\n")

// render_usage: turns doc/usage.txt (format described at its top) into kpack's --help text (a C
// string literal for packer/cli.cc), the kpack(1) man page, or the bash completion script.
//
//   render_usage help|man|bash USAGE.TXT OUTPUT [VERSION]
//
// A build-time tool: errors are one line naming the file and the problem, exit status 1.
#include <cctype>
#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Block {
  std::string kind;  // name, synopsis, summary, option, section
  std::string arg;   // option flags or section title
  std::vector<std::string> lines;
};

struct Option {
  std::vector<std::string> flags;  // "-h", "--help"
  std::string metavar;             // "N", "FILE", or empty
};

[[noreturn]] void fail(const std::string& file, const std::string& problem) {
  std::fprintf(stderr, "render_usage: %s: %s\n", file.c_str(), problem.c_str());
  std::exit(1);
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }

std::vector<Block> parse(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot read");
  std::vector<Block> blocks;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line[0] == '#') continue;
    // A header is a whole line "[kind]" or "[kind ARG]" with a known kind; synopsis lines also
    // start with '[' but never name a kind.
    if (line.size() > 2 && line.front() == '[' && line.back() == ']') {
      std::string inside = line.substr(1, line.size() - 2);
      std::string kind = inside.substr(0, inside.find(' '));
      std::string arg = kind.size() < inside.size() ? inside.substr(kind.size() + 1) : "";
      static const std::set<std::string> kinds = {"name", "synopsis", "summary", "option", "section"};
      if (kinds.count(kind)) {
        if ((kind == "option" || kind == "section") == arg.empty())
          fail(path, "line " + std::to_string(number) + ": [" + kind + "] " +
                         (arg.empty() ? "needs an argument" : "takes no argument"));
        blocks.push_back({kind, arg, {}});
        continue;
      }
    }
    if (blocks.empty()) {
      if (blank(line)) continue;
      fail(path, "line " + std::to_string(number) + ": text before the first [block]");
    }
    blocks.back().lines.push_back(line);
  }
  // Trailing blank lines carry no meaning.
  for (Block& b : blocks)
    while (!b.lines.empty() && blank(b.lines.back())) b.lines.pop_back();
  return blocks;
}

// The lines up to the first blank one (the --help paragraph), or those after it (man only).
std::vector<std::string> first_paragraph(const Block& b) {
  std::vector<std::string> out;
  for (const std::string& l : b.lines) {
    if (blank(l)) break;
    out.push_back(l);
  }
  return out;
}

std::vector<std::string> after_first_paragraph(const Block& b) {
  size_t i = 0;
  while (i < b.lines.size() && !blank(b.lines[i])) ++i;
  while (i < b.lines.size() && blank(b.lines[i])) ++i;
  return {b.lines.begin() + i, b.lines.end()};
}

const Block* find(const std::vector<Block>& blocks, const std::string& kind) {
  for (const Block& b : blocks)
    if (b.kind == kind) return &b;
  return nullptr;
}

bool is_metavar(const std::string& word) {
  if (word.empty()) return false;
  for (char c : word)
    if (!std::isupper(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

Option parse_option(const std::string& header) {
  Option o;
  std::istringstream words(header);
  std::string w;
  while (words >> w) {
    if (w.back() == ',') w.pop_back();
    if (w[0] == '-')
      o.flags.push_back(w);
    else
      o.metavar = w;
  }
  return o;
}

// ---- --help ---------------------------------------------------------------------------------

std::string help_text(const std::vector<Block>& blocks) {
  std::string out;
  const Block* synopsis = find(blocks, "synopsis");
  for (size_t i = 0; synopsis && i < synopsis->lines.size(); ++i)
    out += (i == 0 ? "usage: kpack " : "       kpack ") + synopsis->lines[i] + "\n";
  if (const Block* summary = find(blocks, "summary")) {
    out += "\n";
    for (const std::string& l : summary->lines) out += l + "\n";
  }
  out += "\n";
  // Flags in a column of 18 after two spaces; longer ones take a line of their own.
  for (const Block& b : blocks) {
    if (b.kind != "option") continue;
    std::vector<std::string> text = first_paragraph(b);
    std::string lead = "  " + b.arg;
    if (b.arg.size() <= 16)
      lead += std::string(18 - b.arg.size(), ' ');
    else
      lead += "\n" + std::string(20, ' ');
    for (size_t i = 0; i < text.size(); ++i) out += (i == 0 ? lead : std::string(20, ' ')) + text[i] + "\n";
  }
  return out;
}

std::string c_literal(const std::string& text) {
  std::string out = "// Generated from doc/usage.txt by doc/render_usage.cc: edit that file instead.\n";
  std::string line;
  for (char c : text) {
    if (c == '"' || c == '\\') line += '\\';
    if (c == '\n') {
      out += "\"" + line + "\\n\"\n";
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) out += "\"" + line + "\"\n";
  return out;
}

// ---- man page -------------------------------------------------------------------------------

// Plain text for roff: backslashes and hyphens escaped (so options copy as ASCII), and no line
// may start with a control character.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// Synopsis and option headers: options and subcommands bold, metavariables italic.
std::string roff_usage(const std::string& text) {
  std::string out, word;
  auto flush = [&] {
    if (word.empty()) return;
    if (is_metavar(word))
      out += "\\fI" + roff(word) + "\\fR";
    else
      out += "\\fB" + roff(word) + "\\fR";
    word.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
      word += c;
    } else {
      flush();
      out += roff(std::string(1, c));
    }
  }
  flush();
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// Man-only text: paragraphs, "= TERM" tagged paragraphs, "- " bullets, 4-space literal lines.
std::string roff_body(const std::vector<std::string>& lines) {
  std::string out;
  bool literal = false, fresh = true;
  for (const std::string& l : lines) {
    bool is_literal = l.rfind("    ", 0) == 0;
    if (literal && !is_literal) {
      out += ".fi\n.RE\n";
      literal = false;
      fresh = true;
    }
    if (blank(l)) {
      fresh = true;
    } else if (is_literal) {
      if (!literal) out += ".PP\n.RS 4\n.nf\n";
      literal = true;
      out += roff(l.substr(4)) + "\n";
    } else if (l.rfind("= ", 0) == 0) {
      out += ".TP\n" + roff_usage(l.substr(2)) + "\n";
      fresh = false;
    } else if (l.rfind("- ", 0) == 0) {
      out += ".IP \\(bu 2\n" + roff(l.substr(2)) + "\n";
      fresh = false;
    } else {
      if (fresh) out += ".PP\n";
      fresh = false;
      out += roff(l) + "\n";
    }
  }
  if (literal) out += ".fi\n.RE\n";
  return out;
}

std::string man_page(const std::vector<Block>& blocks, const std::string& version) {
  std::string out = ".\\\" Generated from doc/usage.txt by doc/render_usage.cc: edit that file instead.\n";
  out += ".TH KPACK 1 \"\" \"kpack " + version + "\" \"User Commands\"\n";
  if (const Block* name = find(blocks, "name")) {
    std::string line = name->lines.empty() ? "" : name->lines[0];
    size_t dash = line.find(" - ");
    out += ".SH NAME\n" +
           (dash == std::string::npos ? roff(line) : line.substr(0, dash) + " \\- " + roff(line.substr(dash + 3))) +
           "\n";
  }
  if (const Block* synopsis = find(blocks, "synopsis")) {
    out += ".SH SYNOPSIS\n";
    for (size_t i = 0; i < synopsis->lines.size(); ++i)
      out += (i ? ".br\n" : "") + std::string(".B kpack\n") + roff_usage(synopsis->lines[i]) + "\n";
  }
  if (const Block* summary = find(blocks, "summary")) out += ".SH DESCRIPTION\n" + roff_body(summary->lines);
  out += ".SH OPTIONS\n";
  for (const Block& b : blocks) {
    if (b.kind != "option") continue;
    out += ".TP\n" + roff_usage(b.arg) + "\n";
    for (const std::string& l : first_paragraph(b)) out += roff(l) + "\n";
    std::vector<std::string> more = after_first_paragraph(b);
    // Further paragraphs of a tagged paragraph stay indented under its tag.
    std::string body = roff_body(more);
    for (size_t at = 0; (at = body.find(".PP\n", at)) != std::string::npos;) body.replace(at, 4, ".IP\n");
    out += body;
  }
  for (const Block& b : blocks)
    if (b.kind == "section") out += ".SH " + roff(b.arg) + "\n" + roff_body(b.lines);
  return out;
}

// ---- bash completion ------------------------------------------------------------------------

std::string join(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i ? sep : "") + words[i];
  return out;
}

// The words the completion offers: every option, those whose value is a file, a directory or
// anything else (by the metavariable's ending), and the synopsis' subcommands.
struct CompletionWords {
  std::vector<std::string> all, with_file, with_dir, with_value, commands;
  std::vector<std::pair<std::string, std::string>> with_choice;  // flag, its words ("in-place compact")
};

CompletionWords completion_words(const std::vector<Block>& blocks) {
  CompletionWords w;
  for (const Block& b : blocks) {
    if (b.kind != "option") continue;
    Option o = parse_option(b.arg);
    auto ends_with = [&o](const std::string& tail) {
      return o.metavar.size() >= tail.size() &&
             o.metavar.compare(o.metavar.size() - tail.size(), tail.size(), tail) == 0;
    };
    for (const std::string& f : o.flags) {
      w.all.push_back(f);
      if (o.metavar.find('|') != std::string::npos) {  // "in-place|compact": one of these words
        std::string words = o.metavar;
        for (char& c : words)
          if (c == '|') c = ' ';
        w.with_choice.emplace_back(f, words);
      } else if (!o.metavar.empty())
        (ends_with("FILE") ? w.with_file : ends_with("DIR") ? w.with_dir : w.with_value).push_back(f);
    }
  }
  if (const Block* synopsis = find(blocks, "synopsis")) {
    for (const std::string& l : synopsis->lines) {
      std::string first = l.substr(0, l.find(' '));
      if (!first.empty() && std::islower(static_cast<unsigned char>(first[0]))) w.commands.push_back(first);
    }
  }
  // The parser also accepts --output for -o; complete its value the same way.
  for (const std::string& f : w.with_file)
    if (f == "-o") w.with_file.push_back("--output");
  return w;
}

std::string bash_completion(const std::vector<Block>& blocks) {
  auto [all, with_file, with_dir, with_value, commands, with_choice] = completion_words(blocks);
  // The script's fixed text in raw strings, so it reads as the bash it is; the lists go between.
  std::string out = R"(# bash completion for kpack. Generated from doc/usage.txt by doc/render_usage.cc.
# Plain bash (no bash-completion helpers needed): options, subcommands, file names.
_kpack() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev= i word positional=0
    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    case $prev in
)";
  if (!with_file.empty())
    out += "        " + join(with_file, "|") + ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
  if (!with_dir.empty())
    out += "        " + join(with_dir, "|") + ") COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n";
  for (const auto& [flag, words] : with_choice)
    out += "        " + flag + ") COMPREPLY=($(compgen -W '" + words + "' -- \"$cur\")); return ;;\n";
  if (!with_value.empty()) out += "        " + join(with_value, "|") + ") return ;;  # a number\n";
  out += R"(    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W ')" +
         join(all, " ") + R"(' -- "$cur"))
        return
    fi
    # Count the words before this one that are neither options nor their values.
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
)";
  if (!with_file.empty() || !with_dir.empty() || !with_value.empty() || !with_choice.empty()) {
    std::vector<std::string> valued = with_file;
    valued.insert(valued.end(), with_dir.begin(), with_dir.end());
    valued.insert(valued.end(), with_value.begin(), with_value.end());
    for (const auto& choice : with_choice) valued.push_back(choice.first);
    out += "            " + join(valued, "|") + ") ((i++)) ;;\n";
  }
  out += R"(            -*) ;;
            *) ((positional++)) ;;
        esac
    done
)";
  if (!commands.empty())
    out += "    if (( positional == 0 )); then\n        COMPREPLY=($(compgen -W '" + join(commands, " ") +
           "' -- \"$cur\"))\n    fi\n";
  out += R"(    COMPREPLY+=($(compgen -f -- "$cur"))
}
complete -o filenames -F _kpack kpack
)";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: render_usage help|man|bash USAGE.TXT OUTPUT [VERSION]\n");
    return 2;
  }
  std::string what = argv[1], input = argv[2], output = argv[3];
  std::vector<Block> blocks = parse(input);
  if (!find(blocks, "synopsis")) fail(input, "has no [synopsis]");
  std::string text;
  if (what == "help")
    text = c_literal(help_text(blocks));
  else if (what == "man")
    text = man_page(blocks, argc == 5 ? argv[4] : "");
  else if (what == "bash")
    text = bash_completion(blocks);
  else
    fail(input, "unknown output kind '" + what + "'");
  // Write-then-rename, so an interrupted build never leaves a truncated file behind.
  std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush()) fail(tmp, "cannot write");
  }
  if (std::rename(tmp.c_str(), output.c_str()) != 0) fail(output, "cannot rename into place");
  return 0;
}

// render_usage: turns doc/usage.txt (format described at its top) into kpack's help texts (the
// whole summary and one per command, as a C initializer list for packer/cli/cli.cc), the kpack(1) man
// page, or the bash completion script.
//
//   render_usage help|man|bash USAGE.TXT OUTPUT [VERSION]
//
// A build-time tool: errors are one line naming the file and the problem, exit status 1.
#include <algorithm>
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
  std::string kind;  // name, summary, command, option, section
  std::string arg;   // command name, option flags or section title
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
      static const std::set<std::string> kinds = {"name", "summary", "command", "option", "section"};
      if (kinds.count(kind)) {
        if ((kind == "command" || kind == "option" || kind == "section") == arg.empty())
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

std::vector<const Block*> all_of(const std::vector<Block>& blocks, const std::string& kind) {
  std::vector<const Block*> out;
  for (const Block& b : blocks)
    if (b.kind == kind) out.push_back(&b);
  return out;
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

// A command: its synopsis forms (the first paragraph), the word that selects it (the first word of
// its forms that is neither an option nor a metavariable: none for packing), the flags its forms
// name, and its description (the rest).
struct Command {
  std::string name;
  std::vector<std::string> forms;
  std::string word;
  std::set<std::string> flags;
  std::vector<std::string> description;
};

std::vector<Command> commands(const std::vector<Block>& blocks) {
  std::vector<Command> out;
  for (const Block* b : all_of(blocks, "command")) {
    Command c{b->arg, first_paragraph(*b), "", {}, after_first_paragraph(*b)};
    for (const std::string& form : c.forms) {
      std::string first = form.substr(0, form.find(' '));
      if (!first.empty() && std::islower(static_cast<unsigned char>(first[0]))) c.word = first;
      std::string token;
      for (char ch : form + " ") {
        if (ch == ' ' || ch == '[' || ch == ']' || ch == '|') {
          if (token.size() > 1 && token[0] == '-') c.flags.insert(token);
          token.clear();
        } else {
          token += ch;
        }
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

// The option blocks a command's forms name (any of their flags), in the file's order.
std::vector<const Block*> options_of(const std::vector<Block>& blocks, const Command& c) {
  std::vector<const Block*> out;
  for (const Block* b : all_of(blocks, "option"))
    for (const std::string& f : parse_option(b->arg).flags)
      if (c.flags.count(f)) {
        out.push_back(b);
        break;
      }
  return out;
}

// A synopsis form cut into words at the spaces outside brackets ("[--level N]" is one word).
std::vector<std::string> form_words(const std::string& form) {
  std::vector<std::string> out;
  std::string word;
  int depth = 0;
  for (char c : form) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ' ' && depth == 0) {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

// ---- --help ---------------------------------------------------------------------------------

constexpr size_t kHelpWidth = 100;

// "usage: kpack FORM", filled to kHelpWidth at the spaces outside brackets.
std::string help_form(const std::string& lead, const std::string& form) {
  std::string out = lead, indent(lead.size() + 2, ' ');
  size_t column = lead.size();
  bool first = true;
  for (const std::string& word : form_words(form)) {
    if (!first && column + 1 + word.size() > kHelpWidth) {
      out += "\n" + indent;
      column = indent.size();
    } else if (!first) {
      out += " ";
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
  }
  return out + "\n";
}

// Flags in a column of 18 after two spaces; longer ones take a line of their own.
std::string help_options(const std::vector<const Block*>& options) {
  std::string out;
  for (const Block* b : options) {
    std::vector<std::string> text = first_paragraph(*b);
    std::string lead = "  " + b->arg;
    if (b->arg.size() <= 16)
      lead += std::string(18 - b->arg.size(), ' ');
    else
      lead += "\n" + std::string(20, ' ');
    for (size_t i = 0; i < text.size(); ++i) out += (i == 0 ? lead : std::string(20, ' ')) + text[i] + "\n";
  }
  return out;
}

// Description text as --help prints it: paragraphs as they are, a tagged paragraph's "= " dropped.
std::string help_body(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += (l.rfind("= ", 0) == 0 ? l.substr(2) : l) + "\n";
  return out;
}

// kpack --help: every form of every command, the summary and every option.
std::string help_text(const std::vector<Block>& blocks) {
  std::string out;
  bool first = true;
  for (const Command& c : commands(blocks))
    for (const std::string& form : c.forms) {
      out += help_form(first ? "usage: kpack " : "       kpack ", form);
      first = false;
    }
  if (const Block* summary = find(blocks, "summary")) out += "\n" + help_body(summary->lines);
  return out + "\n" + help_options(all_of(blocks, "option"));
}

// kpack help COMMAND: its forms, its description and its options.
std::string command_help_text(const std::vector<Block>& blocks, const Command& c) {
  std::string out;
  for (size_t i = 0; i < c.forms.size(); ++i) out += help_form(i == 0 ? "usage: kpack " : "       kpack ", c.forms[i]);
  if (!c.description.empty()) out += "\n" + help_body(c.description);
  std::vector<const Block*> options = options_of(blocks, c);
  if (!options.empty()) out += "\n" + help_options(options);
  return out;
}

std::string c_literal(const std::string& text) {
  std::string out, line;
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

// The initializer list of packer/cli/cli.cc's help texts: {"", the whole summary, ""}, then one
// {"COMMAND", its help, " the flags of its options "} per command, which the parser holds the
// command line to.
std::string help_table(const std::vector<Block>& blocks) {
  std::string out = "// Generated from doc/usage.txt by doc/render_usage.cc: edit that file instead.\n";
  out += "{\"\",\n" + c_literal(help_text(blocks)) + ", \"\"},\n";
  for (const Command& c : commands(blocks)) {
    std::string flags = " ";
    for (const Block* b : options_of(blocks, c))
      for (const std::string& f : parse_option(b->arg).flags) flags += f + " ";
    out += "{\"" + c.name + "\",\n" + c_literal(command_help_text(blocks, c)) + ", \"" + flags + "\"},\n";
  }
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

// Further paragraphs of a tagged paragraph stay indented under its tag.
std::string indented(std::string body) {
  for (size_t at = 0; (at = body.find(".PP\n", at)) != std::string::npos;) body.replace(at, 4, ".IP\n");
  return body;
}

// A form with three or more bracketed options in a row shortened to one [OPTIONS].
std::string short_form(const std::string& form) {
  std::vector<std::string> words = form_words(form), out;
  for (size_t i = 0; i < words.size();) {
    size_t run = i;
    while (run < words.size() && words[run][0] == '[') ++run;
    if (run - i >= 3) {
      out.push_back("[OPTIONS]");
      i = run;
    } else {
      out.push_back(words[i++]);
    }
  }
  std::string text;
  for (const std::string& w : out) text += (text.empty() ? "" : " ") + w;
  return text;
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
  out += ".SH SYNOPSIS\n";
  bool first = true;
  for (const Command& c : commands(blocks))
    for (const std::string& form : c.forms) {
      out += (first ? "" : ".br\n") + std::string(".B kpack\n") + roff_usage(form) + "\n";
      first = false;
    }
  if (const Block* summary = find(blocks, "summary")) out += ".SH DESCRIPTION\n" + roff_body(summary->lines);
  out += ".SH OPTIONS\n";
  for (const Block* b : all_of(blocks, "option")) {
    out += ".TP\n" + roff_usage(b->arg) + "\n";
    for (const std::string& l : first_paragraph(*b)) out += roff(l) + "\n";
    out += indented(roff_body(after_first_paragraph(*b)));
  }
  // Each command under its forms, a long run of options shortened to [OPTIONS] (SYNOPSIS has them).
  out += ".SH COMMANDS\n";
  for (const Command& c : commands(blocks)) {
    std::vector<std::string> tags;
    for (const std::string& form : c.forms) {
      std::string tag = "kpack " + short_form(form);
      if (std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(tag);
    }
    for (size_t i = 0; i < tags.size(); ++i)
      out += std::string(i ? ".PD 0\n" : "") + ".TP\n" + roff_usage(tags[i]) + "\n";
    if (tags.size() > 1) out += ".PD\n";
    std::string body = indented(roff_body(c.description));
    // The first paragraph goes right under the tags.
    if (body.rfind(".IP\n", 0) == 0) body.erase(0, 4);
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

// The words the completion offers: every option, those whose value is a file, a directory, one
// of some words or anything else (by the metavariable), each command's word and its options.
struct CompletionWords {
  std::vector<std::string> all, with_file, with_dir, with_value;
  std::vector<std::pair<std::string, std::string>> with_choice;  // flag, its words ("in-place compact")
  std::vector<std::pair<std::string, std::string>> by_command;   // word, its options ("-o --output --relocs")
  std::string packing;                                           // packing's options
  std::vector<std::string> command_words, help_topics;
};

CompletionWords completion_words(const std::vector<Block>& blocks) {
  CompletionWords w;
  for (const Block* b : all_of(blocks, "option")) {
    Option o = parse_option(b->arg);
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
      } else if (!o.metavar.empty()) {
        (ends_with("FILE") ? w.with_file : ends_with("DIR") ? w.with_dir : w.with_value).push_back(f);
      }
    }
  }
  for (const Command& c : commands(blocks)) {
    w.help_topics.push_back(c.name);
    std::vector<std::string> flags;
    for (const Block* b : options_of(blocks, c))
      for (const std::string& f : parse_option(b->arg).flags) flags.push_back(f);
    flags.insert(flags.end(), {"-h", "--help"});
    if (c.word.empty()) {  // packing: no word, its input comes first
      w.packing = join(flags, " ");
      continue;
    }
    w.command_words.push_back(c.word);
    w.by_command.emplace_back(c.word, join(flags, " "));
  }
  return w;
}

std::string bash_completion(const std::vector<Block>& blocks) {
  CompletionWords w = completion_words(blocks);
  // The script's fixed text in raw strings, so it reads as the bash it is; the lists go between.
  std::string out = R"(# bash completion for kpack. Generated from doc/usage.txt by doc/render_usage.cc.
# Plain bash (no bash-completion helpers needed): options, subcommands, file names.
_kpack() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev= i word positional=0 command= options_ended=
    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    # The words before this one: the command (the first that is neither an option nor an option's
    # value), how many such words, and whether -- ended the options.
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ -n $options_ended ]]; then
            ((positional++)) || command=$word
            continue
        fi
        case $word in
            --) options_ended=1 ;;
)";
  std::vector<std::string> valued = w.with_file;
  valued.insert(valued.end(), w.with_dir.begin(), w.with_dir.end());
  valued.insert(valued.end(), w.with_value.begin(), w.with_value.end());
  for (const auto& choice : w.with_choice) valued.push_back(choice.first);
  if (!valued.empty()) out += "            " + join(valued, "|") + ") ((i++)) ;;\n";
  out += R"(            -*) ;;
            *) ((positional++)) || command=$word ;;
        esac
    done
    if [[ -z $options_ended ]]; then
        case $prev in
)";
  if (!w.with_file.empty())
    out += "            " + join(w.with_file, "|") + ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
  if (!w.with_dir.empty())
    out += "            " + join(w.with_dir, "|") + ") COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n";
  for (const auto& [flag, words] : w.with_choice)
    out += "            " + flag + ") COMPREPLY=($(compgen -W '" + words + "' -- \"$cur\")); return ;;\n";
  if (!w.with_value.empty()) out += "            " + join(w.with_value, "|") + ") return ;;  # a number\n";
  out += R"(        esac
        if [[ $cur == -* ]]; then
            # Before the first word every option; after a command's word its options; after
            # packing's input packing's options.
            case $command in
                '') COMPREPLY=($(compgen -W ')" +
         join(w.all, " ") + R"(' -- "$cur")) ;;
)";
  for (const auto& [word, flags] : w.by_command)
    out += "                " + word + ") COMPREPLY=($(compgen -W '" + flags + "' -- \"$cur\")) ;;\n";
  out += "                *) COMPREPLY=($(compgen -W '" + w.packing + R"(' -- "$cur")) ;;
            esac
            return
        fi
    fi
    if [[ $command == help ]]; then
        (( positional == 1 )) && COMPREPLY=($(compgen -W ')" +
         join(w.help_topics, " ") + R"(' -- "$cur"))
        return
    fi
)";
  if (!w.command_words.empty())
    out += "    if (( positional == 0 )); then\n        COMPREPLY=($(compgen -W '" + join(w.command_words, " ") +
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
  if (!find(blocks, "command")) fail(input, "has no [command]");
  std::string text;
  if (what == "help")
    text = help_table(blocks);
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

from spade_core.messages import plural, printable, size_text


def test_counts_take_the_noun_in_the_right_number():
    assert plural(1, "environment") == "1 environment"
    assert plural(0, "environment") == "0 environments"
    assert plural(2, "environment") == "2 environments"
    assert plural(3, "summary", "summaries") == "3 summaries"


def test_sizes_read_as_a_person_would_write_them():
    assert [size_text(n) for n in (0, 999, 1000, 2_500_000, 7_300_000_000, 12 * 10**15)] == [
        "0 bytes", "999 bytes", "1.0 KB", "2.5 MB", "7.3 GB", "12000.0 TB"]


def test_control_characters_are_escaped_newlines_and_tabs_kept():
    assert printable("a\x1b[2Jb\x07\r\x00\x7f\x9b\n\tc é") == \
        "a\\x1b[2Jb\\x07\\x0d\\x00\\x7f\\x9b\n\tc é"


def test_a_worker_s_escape_sequences_never_reach_the_terminal(process_sandbox, spade, tmp_path):
    # A program whose error message holds escape sequences (clear the screen, retitle the
    # window): its verdict, and what `spade check-env` prints, show them escaped.
    program = tmp_path / "loud_env.py"
    program.write_text("class LoudEnv:\n    def reset(self, seed=None):\n"
                       "        raise ValueError('\\x1b[2J\\x1b]0;owned\\x07 gone')\n"
                       "    def step(self, action):\n        return '', 0.0, True, False, {}\n")
    from spade_core.validation import validate

    [verdict] = validate(process_sandbox, [program.read_text()])
    assert verdict.category == "runtime_error" and "\x1b" not in verdict.message
    assert "\\x1b[2J\\x1b]0;owned\\x07 gone" in verdict.message
    done = spade("check-env", str(program))
    assert "\x1b" not in done.stdout + done.stderr and "\\x1b[2J" in done.stdout


def test_json_lines_escape_every_control_character_and_keep_text_readable():
    import json

    from spade_core.messages import json_line

    value = {"message": "a\x1b[2J b\x85c\x9b31m \x7f é ✓", "n": 1}
    line = json_line(value)
    assert json.loads(line) == value
    assert not any(0x7F <= ord(ch) <= 0x9F or ord(ch) < 0x20 for ch in line)
    assert "é ✓" in line and "\\u0085" in line and "\\u007f" in line

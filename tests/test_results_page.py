"""benchmarks/RESULTS.md is what benchmarks/results.py writes from benchmarks/data/."""

from benchmarks import results


def test_the_results_page_is_generated_from_the_data_files():
    assert results.PAGE.read_text() == results.render(), (
        "benchmarks/RESULTS.md differs from its data: run `python -m benchmarks.results`"
    )


def test_every_topic_names_its_run_and_its_data_file():
    page = results.render()
    for topic in results.TOPICS:
        section = page.split(f"## {topic.title}\n", 1)[1].split("\n## ", 1)[0]
        for field in ("- device: ", "- date: 20", "- commit: ", "- command:", "\n| "):
            assert field in section, f"{topic.title}: no {field!r}"
        assert f"`benchmarks/data/{topic.data}`" in section

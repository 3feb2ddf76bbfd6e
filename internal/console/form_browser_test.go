package console_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestTryACallFormInABrowser fills the generated form of a tool whose
// schema nests an object, an array of strings and an array of objects, in
// headless Chromium: items are added and removed, a missing required field
// inside an item comes back as the pipeline's teaching error, and the
// corrected call reaches the provider with exactly the nested arguments.
func TestTryACallFormInABrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium binary on PATH (Debian: apt-get install chromium)")
	}
	f := newFixtureWith(t, "", nil)
	ctx := browser(t, bin, 1200, 1000)

	text := func(sel string, dst *string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			*dst, err = chromedp.Text(chromedp.CSS(sel))(ctx, tg)
			return err
		})
	}
	var invalid, called string
	var items int
	tags := `[data-path="tags"]`
	stops := `[data-path="stops"]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+f.con.LoginPath()),
		chromedp.Navigate(f.srv.URL+"/ui/tools/"+f.canonical("greet")),
		chromedp.WaitVisible(chromedp.CSS(`#call-form fieldset[data-path="extra"]`)),
		chromedp.SendKeys(chromedp.CSS(`#arg-name`), "Ada"),
		chromedp.SendKeys(chromedp.CSS(`#arg-extra\.a`), "x"),
		// Three tags added, the middle one removed.
		chromedp.Click(chromedp.CSS(tags+` > button.add-item`)),
		chromedp.Click(chromedp.CSS(tags+` > button.add-item`)),
		chromedp.Click(chromedp.CSS(tags+` > button.add-item`)),
		chromedp.SendKeys(chromedp.CSS(tags+` li.item:nth-child(1) input`), "a"),
		chromedp.SendKeys(chromedp.CSS(tags+` li.item:nth-child(2) input`), "dropped"),
		chromedp.SendKeys(chromedp.CSS(tags+` li.item:nth-child(3) input`), "b"),
		chromedp.Click(chromedp.CSS(tags+` li.item:nth-child(2) button.remove-item`)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			items, err = chromedp.Evaluate[int](`document.querySelectorAll('[data-path="tags"] li.item').length`)(ctx, tg)
			return err
		}),
		// A stop without its required city: the teaching error, in the page.
		chromedp.Click(chromedp.CSS(stops+` > button.add-item`)),
		chromedp.SendKeys(chromedp.CSS(stops+` li.item input[data-path="stops[].nights"]`), "2"),
		chromedp.Click(chromedp.CSS(`#call-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#call-result.is-error`)),
		text("#call-result", &invalid),
		chromedp.SendKeys(chromedp.CSS(stops+` li.item input[data-path="stops[].city"]`), "Lyon"),
		chromedp.Click(chromedp.CSS(`#call-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#call-result.is-ok`)),
		text("#call-result", &called),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			png, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(t.ArtifactDir(), "tool-form.png"), png, 0o644)
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if items != 2 {
		t.Errorf("tags list has %d items after adding 3 and removing 1", items)
	}
	if !strings.Contains(invalid, "INVALID_ARGUMENTS") || !strings.Contains(invalid, "city") {
		t.Errorf("a stop without its city: %q, want INVALID_ARGUMENTS naming city", invalid)
	}
	if want := "hello Ada (tags a,b; stops [{Lyon 2}])"; !strings.Contains(called, want) {
		t.Errorf("the call answered %q, want %q", called, want)
	}
}

// Command mediagen draws the demo's media files into a directory (the
// demo package's media/, where go:embed takes them): four photos of a
// trip, a sensitive one (a spider), an animated GIF, a short video of
// waves and its poster frame, and the avatars of the demo's people. Everything is flat shapes on a small
// palette, so each file is a few kilobytes. The video is encoded by
// ffmpeg (H.264 baseline, which every browser plays); without ffmpeg on
// PATH the committed clip.mp4 is left as it is.
//
//	go generate ./demo    (runs: go run ./internal/mediagen media)
package main

import (
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
)

const w, h = 320, 240

var palette = color.Palette{
	color.RGBA{0xff, 0xff, 0xff, 0xff}, // 0 white
	color.RGBA{0x1b, 0x1b, 0x1f, 0xff}, // 1 ink
	color.RGBA{0xff, 0xb3, 0x47, 0xff}, // 2 dawn orange
	color.RGBA{0xff, 0x80, 0x8a, 0xff}, // 3 dawn pink
	color.RGBA{0x7f, 0xb8, 0xf0, 0xff}, // 4 sky
	color.RGBA{0x2f, 0x6f, 0xb0, 0xff}, // 5 sea
	color.RGBA{0x1d, 0x3f, 0x6e, 0xff}, // 6 deep sea
	color.RGBA{0xff, 0xe0, 0x66, 0xff}, // 7 sun
	color.RGBA{0x8a, 0x8f, 0x9c, 0xff}, // 8 rock
	color.RGBA{0xf4, 0xf6, 0xfa, 0xff}, // 9 snow
	color.RGBA{0x2e, 0x7d, 0x32, 0xff}, // 10 pine
	color.RGBA{0x1b, 0x5e, 0x20, 0xff}, // 11 dark pine
	color.RGBA{0x6d, 0x4c, 0x41, 0xff}, // 12 bark
	color.RGBA{0x12, 0x16, 0x3a, 0xff}, // 13 night
	color.RGBA{0xff, 0xd5, 0x4f, 0xff}, // 14 lit window
	color.RGBA{0xf2, 0xd8, 0xa7, 0xff}, // 15 sand
	color.RGBA{0xe5, 0x39, 0x35, 0xff}, // 16 red
	color.RGBA{0x4a, 0x4e, 0x5a, 0xff}, // 17 concrete
}

type canvas struct{ *image.Paletted }

func newCanvas(cw, ch int, bg uint8) canvas {
	c := canvas{image.NewPaletted(image.Rect(0, 0, cw, ch), palette)}
	c.rect(0, 0, cw, ch, bg)
	return c
}

func (c canvas) rect(x0, y0, x1, y1 int, ci uint8) {
	for y := max(y0, 0); y < min(y1, c.Rect.Dy()); y++ {
		for x := max(x0, 0); x < min(x1, c.Rect.Dx()); x++ {
			c.SetColorIndex(x, y, ci)
		}
	}
}

func (c canvas) circle(cx, cy, r float64, ci uint8) {
	for y := int(cy - r); y <= int(cy+r); y++ {
		for x := int(cx - r); x <= int(cx+r); x++ {
			if dx, dy := float64(x)-cx, float64(y)-cy; dx*dx+dy*dy <= r*r && image.Pt(x, y).In(c.Rect) {
				c.SetColorIndex(x, y, ci)
			}
		}
	}
}

// triangle fills the triangle with corners a, b, d.
func (c canvas) triangle(a, b, d image.Point, ci uint8) {
	side := func(p, q, r image.Point) int { return (q.X-p.X)*(r.Y-p.Y) - (q.Y-p.Y)*(r.X-p.X) }
	box := image.Rect(min(a.X, b.X, d.X), min(a.Y, b.Y, d.Y), max(a.X, b.X, d.X)+1, max(a.Y, b.Y, d.Y)+1).Intersect(c.Rect)
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			p := image.Pt(x, y)
			s1, s2, s3 := side(a, b, p), side(b, d, p), side(d, a, p)
			if (s1 >= 0 && s2 >= 0 && s3 >= 0) || (s1 <= 0 && s2 <= 0 && s3 <= 0) {
				c.SetColorIndex(x, y, ci)
			}
		}
	}
}

// line draws a line of width 2r from (x0, y0) to (x1, y1).
func (c canvas) line(x0, y0, x1, y1, r float64, ci uint8) {
	n := int(math.Hypot(x1-x0, y1-y0)) + 1
	for i := 0; i <= n; i++ {
		t := float64(i) / float64(n)
		c.circle(x0+t*(x1-x0), y0+t*(y1-y0), r, ci)
	}
}

func lake() canvas {
	c := newCanvas(w, h, 4)
	for i, ci := range []uint8{3, 2, 3, 2} {
		c.rect(0, 40+i*18, w, 58+i*18, ci)
	}
	c.circle(230, 110, 26, 7)
	c.triangle(image.Pt(-20, 150), image.Pt(90, 60), image.Pt(200, 150), 8)
	c.triangle(image.Pt(70, 80), image.Pt(90, 60), image.Pt(110, 80), 9)
	c.triangle(image.Pt(140, 150), image.Pt(250, 85), image.Pt(360, 150), 8)
	c.rect(0, 150, w, h, 5)
	for y := 160; y < h; y += 14 {
		c.rect(40+y%60, y, 120+y%60, y+3, 6)
	}
	return c
}

func forest() canvas {
	c := newCanvas(w, h, 4)
	c.rect(0, 190, w, h, 10)
	for i := range 9 {
		x := 10 + i*37
		top := 50 + (i*29)%60
		ci := uint8(10 + i%2)
		c.rect(x+14, 170, x+22, 200, 12)
		c.triangle(image.Pt(x-8, 180), image.Pt(x+18, top), image.Pt(x+44, 180), ci)
	}
	return c
}

func city() canvas {
	c := newCanvas(w, h, 13)
	c.circle(270, 40, 16, 9)
	c.circle(262, 34, 14, 13)
	for i, bw := range []int{40, 55, 35, 60, 45, 50} {
		x := 8 + i*52
		top := 70 + (i*37)%80
		c.rect(x, top, x+bw, h, 17)
		for wy := top + 8; wy < h-10; wy += 16 {
			for wx := x + 6; wx < x+bw-8; wx += 12 {
				if (wx*7+wy*3)%5 != 0 {
					c.rect(wx, wy, wx+6, wy+8, 14)
				}
			}
		}
	}
	return c
}

func beach() canvas {
	c := newCanvas(w, h, 4)
	c.circle(60, 50, 22, 7)
	c.rect(0, 110, w, 160, 5)
	c.rect(0, 150, w, h, 15)
	c.line(210, 205, 190, 120, 2, 12)
	c.triangle(image.Pt(150, 130), image.Pt(190, 100), image.Pt(235, 125), 16)
	c.rect(60, 195, 150, 205, 3)
	return c
}

func spider() canvas {
	c := newCanvas(w, h, 0)
	cx, cy := 160.0, 120.0
	for i := range 4 {
		dy := float64(i-1)*22 - 8
		for _, s := range []float64{-1, 1} {
			kx, ky := cx+s*60, cy+dy-30
			c.line(cx, cy, kx, ky, 2.5, 1)
			c.line(kx, ky, cx+s*100, cy+dy+40, 2, 1)
		}
	}
	c.circle(cx, cy+10, 34, 1)
	c.circle(cx, cy-30, 20, 1)
	c.circle(cx-7, cy-34, 4, 16)
	c.circle(cx+7, cy-34, 4, 16)
	return c
}

// waves is frame i of n of the video: a swell moving across the sea.
func waves(i, n int) canvas {
	const vw, vh = 160, 120
	c := newCanvas(vw, vh, 4)
	c.circle(120, 30, 14, 7)
	for x := range vw {
		phase := 2 * math.Pi * (float64(x)/80 - float64(i)/float64(n))
		top := 70 + int(6*math.Sin(phase))
		c.rect(x, top, x+1, vh, 5)
		c.rect(x, top+18+int(3*math.Sin(phase*2)), x+1, vh, 6)
	}
	return c
}

// spinner is frame i of n of the GIF: a dot running round a ring.
func spinner(i, n int) *image.Paletted {
	c := newCanvas(120, 120, 0)
	for k := range n {
		a := 2 * math.Pi * float64(k) / float64(n)
		ci := uint8(8)
		if k == i {
			ci = 16
		}
		c.circle(60+38*math.Cos(a), 60+38*math.Sin(a), 8, ci)
	}
	return c.Paletted
}

func writePNG(dir, name string, c canvas) error {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, c.Paletted); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeGIF(dir, name string, frames int) error {
	g := &gif.GIF{}
	for i := range frames {
		g.Image = append(g.Image, spinner(i, frames))
		g.Delay = append(g.Delay, 10) // 1/100 s units: 100 ms a frame
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := gif.EncodeAll(f, g); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeVideo encodes frames of waves with ffmpeg: 2 s at 10 frames a second.
func writeVideo(dir, name string) error {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		fmt.Fprintf(os.Stderr, "mediagen: no ffmpeg on PATH; %s left as it is\n", name)
		return nil
	}
	tmp, err := os.MkdirTemp("", "mediagen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	const frames = 20
	for i := range frames {
		if err := writePNG(tmp, fmt.Sprintf("f%02d.png", i), waves(i, frames)); err != nil {
			return err
		}
	}
	cmd := exec.Command(ffmpeg, "-y", "-loglevel", "error", "-framerate", "10", "-i", filepath.Join(tmp, "f%02d.png"),
		"-c:v", "libx264", "-profile:v", "baseline", "-pix_fmt", "yuv420p", "-crf", "30", "-movflags", "+faststart",
		"-an", "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact", filepath.Join(dir, name))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// avatars is how many avatars the demo's people share (avatar-00.png
// ...): demo.avatarFor picks one by id.
const avatars = 16

// avatar draws avatar i: a symmetric 5x5 pattern (an identicon) in one of
// the palette's colours on a light ground, 80 pixels square.
func avatar(i int) canvas {
	const side, cell, pad = 80, 12, 10
	inks := []uint8{2, 3, 5, 6, 10, 11, 12, 16}
	c := newCanvas(side, side, 9)
	ink := inks[i%len(inks)]
	bits := uint32(i)*2654435761 + 0x9e3779b9 // a fixed hash of i: the pattern
	for y := range 5 {
		for x := range 3 {
			if bits>>(y*3+x)&1 == 1 {
				for _, col := range []int{x, 4 - x} {
					c.rect(pad+col*cell, pad+y*cell, pad+(col+1)*cell, pad+(y+1)*cell, ink)
				}
			}
		}
	}
	return c
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mediagen DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	steps := []func() error{
		func() error { return writePNG(dir, "lake.png", lake()) },
		func() error { return writePNG(dir, "forest.png", forest()) },
		func() error { return writePNG(dir, "city.png", city()) },
		func() error { return writePNG(dir, "beach.png", beach()) },
		func() error { return writePNG(dir, "spider.png", spider()) },
		func() error { return writePNG(dir, "waves-poster.png", waves(0, 20)) },
		func() error { return writeGIF(dir, "spinner.gif", 12) },
		func() error { return writeVideo(dir, "waves.mp4") },
	}
	for i := range avatars {
		steps = append(steps, func() error { return writePNG(dir, fmt.Sprintf("avatar-%02d.png", i), avatar(i)) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			fmt.Fprintln(os.Stderr, "mediagen:", err)
			os.Exit(1)
		}
	}
}

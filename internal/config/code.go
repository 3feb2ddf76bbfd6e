package config

import "go.yaml.in/yaml/v3"

// decodeField decodes code.memory, a size with a unit; the other keys
// decode by type.
func (c *Code) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "memory" {
		return false
	}
	s, ok := d.str(v, p, false)
	if !ok {
		return true
	}
	n, err := ParseSize(s)
	if err != nil {
		d.errAt(v, p, "%v", err)
		return true
	}
	c.Memory = n
	return true
}
